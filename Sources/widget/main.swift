import SimulatedApp
WidgetCommand.main()
