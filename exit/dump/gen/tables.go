package gen

// table is one dump table: its name and columns in COPY order.
type table struct {
	name    string
	columns []string
}

// The tables, in the order they appear in 1_schema.sql and 2_data.sql (exit/dump/FORMAT.md).
const (
	tTrustchains = iota
	tUsers
	tDevices
	tUserGroups
	tUserGroupMembers
	tUserGroupProvisionalMembers
	tKeyPublishes
	tProvisionalIdentityClaims
	tTankerProvisionalKeys
	numTables
)

var tables = [numTables]table{
	tTrustchains: {"trustchains", []string{"id", "public_signature_key", "root_block", "created_at"}},
	tUsers:       {"users", []string{"trustchain_id", "user_id", "encrypted_verification_key_for_user_secret", "created_at"}},
	tDevices: {"devices", []string{"trustchain_id", "device_id", "user_id", "is_ghost_device", "public_signature_key",
		"public_encryption_key", "user_public_encryption_key", "sealed_user_private_encryption_key", "block", "created_at"}},
	tUserGroups:       {"user_groups", []string{"trustchain_id", "group_id", "public_encryption_key", "nature", "block", "created_at"}},
	tUserGroupMembers: {"user_group_members", []string{"trustchain_id", "group_id", "user_id", "user_public_encryption_key", "sealed_group_private_encryption_key"}},
	tUserGroupProvisionalMembers: {"user_group_provisional_members", []string{"trustchain_id", "group_id", "app_public_signature_key",
		"tanker_public_signature_key", "two_times_sealed_group_private_encryption_key"}},
	tKeyPublishes: {"key_publishes", []string{"trustchain_id", "resource_id", "nature", "recipient", "sealed_key", "author", "block", "created_at"}},
	tProvisionalIdentityClaims: {"provisional_identity_claims", []string{"trustchain_id", "user_id", "app_public_signature_key",
		"tanker_public_signature_key", "user_public_encryption_key", "sealed_private_encryption_keys", "block", "created_at"}},
	tTankerProvisionalKeys: {"tanker_provisional_keys", []string{"trustchain_id", "target", "hashed_value", "app_public_signature_key",
		"tanker_public_signature_key", "tanker_public_encryption_key", "tanker_private_signature_key", "tanker_private_encryption_key"}},
}
