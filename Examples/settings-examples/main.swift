import SettingsExamples
import SimulatedFoundation

exit(ExampleCommands.run(Array(CommandLine.arguments.dropFirst())))
