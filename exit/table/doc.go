// Package table decrypts ciphertext columns of a PostgreSQL table into another table, in
// batches that each commit with their progress, so that a run stopped at any point (SIGKILL
// included) continues where it stopped and writes every row exactly once
// (`idvault exit decrypt-table`).
//
// The source (a table, or a query) is read by key ranges with index scans
// (WHERE key > $last AND key <= $end ORDER BY key LIMIT n), in PostgreSQL's binary format, so
// that every column but the ciphertexts goes to the destination as the bytes the source sent,
// whatever its type. The ciphertexts go to a Decrypter (the exit servers' bulk client, wired by
// the command line); the rows go to the destination with COPY (binary), in one transaction with
// the batch's failures (<to-table>_errors) and its range's last key (<to-table>_progress). The
// batches commit without waiting for the disk (a crash of PostgreSQL loses a batch and its
// progress together); the run's end commits once with the configured synchronous_commit, which
// puts every earlier batch on disk before the summary counts it.
//
// Clear bytes exist only in memory and in the destination table: no error, log line or
// message of this package holds one, and the destination's sessions run with
// log_error_verbosity = terse where the role may set it, so that a row the destination refuses
// (a CHECK constraint, a trigger) does not have its values written into PostgreSQL's server
// log (the DETAIL "Failing row contains (...)").
package table
