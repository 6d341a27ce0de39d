import KCAgent

/// The hidden `kc __agent-wire`: the agent's message kinds and enum codes of this build, as JSON
/// generated from KCAgent's own types, for test clients that speak the wire (Tests/e2e/agentwire.py).
let agentWireCommand = CommandSpec("__agent-wire", abstract: "Print the agent's message kinds and enum codes (JSON) of this build.", hidden: true,
                handler: { _, context throws(CLIError) in
                    context.output.writeLine(AgentWireTable.json)
                    return 0
                })
