package dump

// File names of a dump (exit/dump/FORMAT.md).
const (
	SchemaFile     = "1_schema.sql"
	DataFile       = "2_data.sql"
	IndexesFile    = "3_indexes.sql"
	AppFile        = "app.json"
	IdentitiesFile = "identities.jsonl"
	ManifestFile   = "manifest.jsonl"
	DataDir        = "data"
)

// SchemaSQL is 1_schema.sql, as exit/dump/FORMAT.md fixes it.
const SchemaSQL = `-- idvault exit dump: schema (exit/dump/FORMAT.md). Runs on PostgreSQL 11 and later.

CREATE TABLE trustchains (
    id                   bytea       NOT NULL,
    public_signature_key bytea       NOT NULL,
    root_block           bytea       NOT NULL,
    created_at           timestamptz NOT NULL
);

CREATE TABLE users (
    trustchain_id bytea       NOT NULL,
    user_id       bytea       NOT NULL,
    encrypted_verification_key_for_user_secret bytea,
    created_at    timestamptz NOT NULL
);

CREATE TABLE devices (
    trustchain_id                      bytea       NOT NULL,
    device_id                          bytea       NOT NULL,
    user_id                            bytea       NOT NULL,
    is_ghost_device                    boolean     NOT NULL,
    public_signature_key               bytea       NOT NULL,
    public_encryption_key              bytea       NOT NULL,
    user_public_encryption_key         bytea,
    sealed_user_private_encryption_key bytea,
    block                              bytea       NOT NULL,
    created_at                         timestamptz NOT NULL
);

CREATE TABLE user_groups (
    trustchain_id         bytea       NOT NULL,
    group_id              bytea       NOT NULL,
    public_encryption_key bytea       NOT NULL,
    nature                smallint    NOT NULL,
    block                 bytea       NOT NULL,
    created_at            timestamptz NOT NULL
);

CREATE TABLE user_group_members (
    trustchain_id                       bytea NOT NULL,
    group_id                            bytea NOT NULL,
    user_id                             bytea,
    user_public_encryption_key          bytea NOT NULL,
    sealed_group_private_encryption_key bytea NOT NULL
);

CREATE TABLE user_group_provisional_members (
    trustchain_id                                 bytea NOT NULL,
    group_id                                      bytea NOT NULL,
    app_public_signature_key                      bytea NOT NULL,
    tanker_public_signature_key                   bytea NOT NULL,
    two_times_sealed_group_private_encryption_key bytea NOT NULL
);

CREATE TABLE key_publishes (
    trustchain_id bytea       NOT NULL,
    resource_id   bytea       NOT NULL,
    nature        smallint    NOT NULL,
    recipient     bytea       NOT NULL,
    sealed_key    bytea       NOT NULL,
    author        bytea       NOT NULL,
    block         bytea       NOT NULL,
    created_at    timestamptz NOT NULL
);

CREATE TABLE provisional_identity_claims (
    trustchain_id                  bytea       NOT NULL,
    user_id                        bytea       NOT NULL,
    app_public_signature_key       bytea       NOT NULL,
    tanker_public_signature_key    bytea       NOT NULL,
    user_public_encryption_key     bytea       NOT NULL,
    sealed_private_encryption_keys bytea       NOT NULL,
    block                          bytea       NOT NULL,
    created_at                     timestamptz NOT NULL
);

CREATE TABLE tanker_provisional_keys (
    trustchain_id                 bytea NOT NULL,
    target                        text  NOT NULL,
    hashed_value                  bytea NOT NULL,
    app_public_signature_key      bytea NOT NULL,
    tanker_public_signature_key   bytea NOT NULL,
    tanker_public_encryption_key  bytea NOT NULL,
    tanker_private_signature_key  bytea NOT NULL,
    tanker_private_encryption_key bytea NOT NULL
);
`

// IndexesSQL is 3_indexes.sql, as exit/dump/FORMAT.md fixes it.
const IndexesSQL = `-- idvault exit dump: primary keys and indexes (exit/dump/FORMAT.md).

ALTER TABLE trustchains ADD PRIMARY KEY (id);
ALTER TABLE users ADD PRIMARY KEY (trustchain_id, user_id);
ALTER TABLE devices ADD PRIMARY KEY (trustchain_id, device_id);
CREATE INDEX devices_user ON devices (trustchain_id, user_id);
CREATE INDEX user_groups_group ON user_groups (trustchain_id, group_id);
CREATE INDEX user_groups_enc ON user_groups (trustchain_id, public_encryption_key);
CREATE INDEX user_group_members_user ON user_group_members (trustchain_id, user_public_encryption_key);
CREATE INDEX user_group_members_group ON user_group_members (trustchain_id, group_id);
CREATE INDEX user_group_provisional_members_keys ON user_group_provisional_members (trustchain_id, app_public_signature_key, tanker_public_signature_key);
CREATE INDEX key_publishes_resource ON key_publishes (trustchain_id, resource_id);
CREATE INDEX provisional_identity_claims_user ON provisional_identity_claims (trustchain_id, user_id);
CREATE INDEX tanker_provisional_keys_app ON tanker_provisional_keys (trustchain_id, app_public_signature_key);
`
