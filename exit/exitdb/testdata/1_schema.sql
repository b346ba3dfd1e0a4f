CREATE TABLE trustchains (
    id                   bytea       NOT NULL, -- app ID, 32 bytes
    public_signature_key bytea       NOT NULL, -- app public signature key, 32 bytes
    root_block           bytea       NOT NULL, -- serialized TrustchainCreation block (nature 1)
    created_at           timestamptz NOT NULL
);

CREATE TABLE users (
    trustchain_id bytea       NOT NULL,
    user_id       bytea       NOT NULL, -- hashed user ID, 32 bytes (the `value` of a permanent identity)
    -- EncryptorV2 (format 2) of the ASCII base64 verification key, keyed by the identity's
    -- user_secret; NULL for users whose verification key is not kept by the service
    encrypted_verification_key_for_user_secret bytea,
    created_at    timestamptz NOT NULL
);

CREATE TABLE devices ( -- one row per DeviceCreation block (natures 2, 6, 7)
    trustchain_id                      bytea       NOT NULL,
    device_id                          bytea       NOT NULL, -- hash of the block, 32 bytes
    user_id                            bytea       NOT NULL,
    is_ghost_device                    boolean     NOT NULL,
    public_signature_key               bytea       NOT NULL, -- 32 bytes
    public_encryption_key              bytea       NOT NULL, -- 32 bytes
    user_public_encryption_key         bytea,                -- nature 7 only, 32 bytes
    sealed_user_private_encryption_key bytea,                -- nature 7 only, 80 bytes, sealed to public_encryption_key
    block                              bytea       NOT NULL, -- serialized block
    created_at                         timestamptz NOT NULL
);

CREATE TABLE user_groups ( -- one row per group creation or addition block (natures 10, 12, 15, 16, 17, 18)
    trustchain_id         bytea       NOT NULL,
    group_id              bytea       NOT NULL, -- the group's public signature key, 32 bytes
    public_encryption_key bytea       NOT NULL, -- the group's public encryption key, 32 bytes
    nature                smallint    NOT NULL,
    block                 bytea       NOT NULL,
    created_at            timestamptz NOT NULL
);

CREATE TABLE user_group_members ( -- one row per member entry of those blocks
    trustchain_id                       bytea NOT NULL,
    group_id                            bytea NOT NULL,
    user_id                             bytea,          -- NULL for v1 blocks (natures 10, 12)
    user_public_encryption_key          bytea NOT NULL, -- 32 bytes
    sealed_group_private_encryption_key bytea NOT NULL  -- 80 bytes, sealed to user_public_encryption_key
);

CREATE TABLE user_group_provisional_members (
    trustchain_id                                 bytea NOT NULL,
    group_id                                      bytea NOT NULL,
    app_public_signature_key                      bytea NOT NULL, -- 32 bytes
    tanker_public_signature_key                   bytea NOT NULL, -- 32 bytes
    two_times_sealed_group_private_encryption_key bytea NOT NULL  -- 128 bytes
);

CREATE TABLE key_publishes ( -- one row per KeyPublish block (natures 8, 11, 13)
    trustchain_id bytea       NOT NULL,
    resource_id   bytea       NOT NULL, -- 16 bytes: simple resource ID, or a session ID / seed for formats 9 to 11
    nature        smallint    NOT NULL,
    -- nature 8: the recipient user's public encryption key (32 bytes)
    -- nature 11: the recipient group's public encryption key (32 bytes)
    -- nature 13: app public signature key || tanker public signature key (64 bytes)
    recipient     bytea       NOT NULL,
    sealed_key    bytea       NOT NULL, -- 80 bytes (natures 8, 11) or 128 bytes two-times sealed (nature 13)
    author        bytea       NOT NULL, -- device ID of the author
    block         bytea       NOT NULL,
    created_at    timestamptz NOT NULL
);

CREATE TABLE provisional_identity_claims ( -- one row per ProvisionalIdentityClaim block (nature 14)
    trustchain_id                  bytea       NOT NULL,
    user_id                        bytea       NOT NULL,
    app_public_signature_key       bytea       NOT NULL,
    tanker_public_signature_key    bytea       NOT NULL,
    user_public_encryption_key     bytea       NOT NULL,
    sealed_private_encryption_keys bytea       NOT NULL, -- 112 bytes: seal(app priv enc || tanker priv enc, user pub enc)
    block                          bytea       NOT NULL,
    created_at                     timestamptz NOT NULL
);

CREATE TABLE tanker_provisional_keys ( -- the service-held half of every provisional identity
    trustchain_id                 bytea NOT NULL,
    target                        text  NOT NULL, -- 'email' or 'phone_number'
    hashed_value                  bytea NOT NULL, -- H_32(email), or the salted phone hash
    app_public_signature_key      bytea NOT NULL,
    tanker_public_signature_key   bytea NOT NULL,
    tanker_public_encryption_key  bytea NOT NULL,
    tanker_private_signature_key  bytea NOT NULL, -- 64 bytes
    tanker_private_encryption_key bytea NOT NULL  -- 32 bytes
);
