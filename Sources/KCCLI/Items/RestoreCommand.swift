import KCCommandSession
import KCSession
import KCKeychain

/// `kc restore [CLASS]`: brings back a deleted item while its versions are in the vault, and the
/// listing of `kc history --deleted` (`ItemPrinter.writeDeleted`).
let restoreCommands: [CommandSpec] = ([nil] + ItemClass.allCases).map(restoreCommand)

private func restoreCommand(_ itemClass: ItemClass?) -> CommandSpec {
    let name = itemClass.map { "restore \($0.rawValue)" } ?? "restore"
    return CommandSpec(
        name, abstract: "Bring back a deleted \(itemClass.map { "\($0.rawValue) " } ?? "")item.",
        discussion: """
        Puts the last version of the deleted item the attribute flags select back, as a new version of the \
        same item (its id, creation date and history kept; on the other machines once synced). The flags match \
        the item as it was before the delete\(itemClass == nil ? ", -s its service or server" : ""); 'kc history \
        --deleted' lists the deleted items. Of several deleted items with one primary key, the one deleted last \
        comes back. More than one match needs --all (otherwise the matches are listed and kc exits 2), and --all \
        an attribute flag. Nothing deleted matches: errSecItemNotFound (exit 44); an item with the same primary key \
        exists now: errSecDuplicateItem (exit 45), and nothing is changed. 'kc compact' drops the versions of \
        deleted items for good. While the vault's agent is unlocked, the agent restores without a password.
        """,
        options: (itemClass.map { ItemOptions.selectingOptions(for: $0) } ?? eitherClassOptions) + [
            ignoreCaseOption,
            .flag(SharedOptions.all, help: "Bring back every deleted item that matches."),
        ],
        examples: ["kc \(name) -s old.example -a me", "kc history --deleted"],
        reading: { Selection($0, itemClass, all: $0[SharedOptions.all]) },
        handler: { selection, _, context throws(CLIError) in try runRestore(selection, context) })
}

func runRestore(_ selection: Selection, _ context: Context) throws(CLIError) -> Int32 {
    let queries = try selectionQueries(selection, command: "restore")
    let restored: [Item]
    do throws(CLIError) { restored = try served(context.session().restore(anyOf: queries)) } catch where error.status == .duplicateItem {
        throw CLIError(.duplicateItem, "an item with the same primary key was added since the delete; nothing was restored",
                       hint: "see it with 'kc find ... --all'; to bring the deleted one back, delete that item first (kc restore then brings back the one deleted last)")
    }
    context.notice("restored \(count(restored.count))")
    return 0
}
