package cli

// exitCommand is `idvault exit`: the exit server when given flags and no subcommand
// (exit_serve_cmd.go), and the exit tooling subcommands.
func exitCommand() *command {
	return &command{
		name:    "exit",
		summary: "the exit server over a restored dump; exit tooling: gen-dump, load-dump, import, decrypt, decrypt-records, decrypt-table, audit, forget",
		help: `Without a subcommand, runs the exit server: it imports users' private identities into the
database restored from an exit dump (PUT /v1/identities) and decrypts the app's data
(POST /v1/decrypt). Every flag is also a key of the config's exit: section and an
IDVAULT_EXIT__* variable (IDVAULT_EXIT__DB, IDVAULT_EXIT__TOKEN keep secrets off the command line).`,
		subs:  exitSubcommands(),
		setup: exitServerSetup,
	}
}

// exitSubcommands lists the exit tooling commands.
func exitSubcommands() []*command {
	return []*command{
		exitGenDumpCommand(),
		exitLoadDumpCommand(),
		exitImportCommand(),
		exitDecryptCommand(),
		exitRecordsCommand(),
		exitTableCommand(),
		exitAuditCommand(),
		exitForgetCommand(),
	}
}
