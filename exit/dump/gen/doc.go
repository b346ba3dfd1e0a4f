// Package gen writes synthetic exit dumps in the format of package dump (`idvault exit
// gen-dump`): apps with users, devices, groups, provisional identities and resources
// encrypted in every format, the negative cases a decrypt must report, the manifest and the
// SHA256SUMS of the clear files, all deterministic from a seed.
package gen
