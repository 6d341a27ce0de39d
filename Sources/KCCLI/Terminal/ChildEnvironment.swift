extension Context {
    /// The environment of a user's program kc runs (gpg, git, the clipboard's): the user's own
    /// (GNUPGHOME, DISPLAY, PATH), without kc's variables (KC_*: kc's settings, and where its
    /// master password comes from). The one place that decides it; the agent, kc itself, keeps
    /// only the few variables it names (`AgentLauncher.passedVariables`), and git gets it less
    /// the GIT_ variables that would redirect it (`Git.environment(from:)`).
    var childEnvironment: [String: String] { environment.filter { !$0.key.hasPrefix("KC_") } }
}
