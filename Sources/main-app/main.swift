import SimulatedApp
MainAppCommand.main()
