import Terminal

/// Every line this module prints goes through `StandardOutput`, so a closed
/// stdout (`| head -1`) ends the command quietly instead of trapping or
/// writing into nothing.
func print(_ line: String) { LineWriter.standardOutput.write(line) }
