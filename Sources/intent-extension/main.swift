import SimulatedApp
IntentExtensionCommand.main()
