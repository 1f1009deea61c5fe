import ChildProcess
import GroupSimCLI

// Ends with whoever started it, if asked to (OwnerLifetime).
OwnerLifetime.adopt()
GroupSimCommand.main()
