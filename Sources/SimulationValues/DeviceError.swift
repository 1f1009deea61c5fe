/// What went wrong with a device: its name, its files, its clock.
package struct DeviceError: Error, CustomStringConvertible {
    package let description: String
    package init(_ description: String) { self.description = description }
}
