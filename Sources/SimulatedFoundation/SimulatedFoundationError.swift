import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Why a program's control channel could not be served: the variable that
/// named it, its value, and the descriptor, path or errno involved. Internal
/// (`FoundationDefaultsCheck.CheckError` is the layer's public error);
/// `description` is the one place these become text.
enum SimulatedFoundationError: Error, CustomStringConvertible {
    case wakePipe(errno: Int32)
    /// `variable=text` that is not a descriptor number of 3 or more.
    case notADescriptor(variable: String, text: String)
    case descriptorNotOpen(variable: String, text: String, descriptor: Int32, errno: Int32)
    case notAStreamSocket(variable: String, text: String, descriptor: Int32)
    /// The socket at `path` could not be connected to: `error` says why.
    case cannotConnect(variable: String, path: String, error: any Error)

    var description: String {
        switch self {
        case .wakePipe(let errno): "cannot make the channel's wake pipe: \(String(cString: strerror(errno)))"
        case .notADescriptor(let variable, let text):
            "\(variable)=\(text) is not a descriptor number of 3 or more (0, 1 and 2 are the program's own standard streams)"
        case .descriptorNotOpen(let variable, let text, let descriptor, let errno):
            "\(variable)=\(text): descriptor \(descriptor) is not open (\(String(cString: strerror(errno)))); the starter must leave it open across exec"
        case .notAStreamSocket(let variable, let text, let descriptor):
            "\(variable)=\(text): descriptor \(descriptor) is not a stream socket (make one with socketpair(AF_UNIX, SOCK_STREAM))"
        case .cannotConnect(let variable, let path, let error):
            "\(variable)='\(path)': \(error); the starter must listen there, as this program's user, before starting it"
        }
    }
}
