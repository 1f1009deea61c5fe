import Benchmarks
BenchCommand.main()
