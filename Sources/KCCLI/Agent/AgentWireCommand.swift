import KCSession
import KCAgent
import KCCrypto
import KCExchange
import KCKeychain
import KCSystem

/// The hidden `kc __agent-wire [encode|decode]`, for test clients that speak the agent's wire
/// (Tests/e2e/agentwire.py, Docs/AGENT.md "Test clients"). Without a mode: the message kinds and
/// enum codes of this build, as JSON. `encode`: the frames of the request described by the JSON on
/// standard input (secrets only there), written by kc's own `AgentRequest`. `decode`: the reply
/// message on standard input as JSON, read by kc's own `AgentReply`.
let agentWireCommand = CommandSpec("__agent-wire", abstract: "Print the agent's message kinds and enum codes (JSON) of this build.",
                arguments: [ArgumentSpec("MODE", help: "encode (a request's JSON to frames) or decode (a reply's frames to JSON).",
                                         optional: true)],
                hidden: true,
                handler: { invocation, context throws(CLIError) in
                    switch invocation.arguments.first {
                    case nil: context.output.writeLine(AgentWireTable.json)
                    case "encode":
                        let description = try SecretSource.readAll(.standardInput, what: "the request's description", limit: 64 << 20)
                        let frames: [SecureBytes]
                        do throws(AgentWireDescriptionError) { frames = try AgentWireTable.encode(description) } catch {
                            switch error {
                            case .json(let failure):
                                throw CLIError(.param, "the request's description, line \(failure.line): \(ExchangeWording.text(failure.problem))")
                            case .field(let path, let expected):
                                throw CLIError(.param, "the request's description: \(Printable.text(path)): expected \(expected)")
                            case .unknownField(let path):
                                throw CLIError(.param, "the request's description: \(Printable.text(path)): no such field")
                            }
                        }
                        for frame in frames { frame.withUnsafeBytes { context.output.write(bytes: $0) } }
                    case "decode":
                        let frames = try SecretSource.readAll(.standardInput, what: "the reply's frames", limit: 64 << 20)
                        context.output.writeLine(try AgentWording.call { () throws(AgentError) in try AgentWireTable.decode(frames) })
                    case let mode?:
                        throw CLIError(.param, "unknown mode \(Printable.text(mode)): encode or decode")
                    }
                    return 0
                })
