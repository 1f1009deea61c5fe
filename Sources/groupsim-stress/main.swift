import ChildProcess
import StressTool

// Ends with whoever started it, if asked to (OwnerLifetime).
OwnerLifetime.adopt()
StressCommand.main()
