/// A value read and written through closures, as SwiftUI's `Binding` is: what
/// `$setting` of an `@AppStorage` property hands to code that changes it.
///
/// Only the members `@AppStorage` needs: `init(get:set:)`, `wrappedValue` and
/// `projectedValue` (docs/api.md lists what is left out and why).
@propertyWrapper
public struct Binding<Value> {
    private let read: () -> Value
    private let write: (Value) -> Void

    /// A binding that calls `get` for each read and `set` for each write.
    /// - Parameters:
    ///   - get: Returns the current value.
    ///   - set: Stores a new value.
    public init(get: @escaping () -> Value, set: @escaping (Value) -> Void) {
        read = get
        write = set
    }

    /// The value `get` gives now; setting it calls `set`.
    public var wrappedValue: Value {
        get { read() }
        nonmutating set { write(newValue) }
    }

    /// The binding itself, as SwiftUI's is (`$binding` of a `@Binding` property).
    public var projectedValue: Binding<Value> { self }
}
