import GroupSimCLI
GroupSimCommand.main()
