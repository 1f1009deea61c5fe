// The switched module (ModuleWideSwitch.swift and the files beside it) as an
// executable: nothing of it uses Foundation's own UserDefaults.
foundationOnlyFile()
bothImportsSwitched()
print("switched=ran")
