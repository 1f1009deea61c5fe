import ChildProcess
import SimulatedApp

// Ends with whoever started it, if asked to (OwnerLifetime).
OwnerLifetime.adopt()
IntentExtensionCommand.main()
