import StressTool
StressCommand.main()
