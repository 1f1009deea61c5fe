import Benchmarks
import ChildProcess

// Ends with whoever started it, if asked to (OwnerLifetime).
OwnerLifetime.adopt()
BenchCommand.main()
