/// The PostgreSQL store's schema: one migration an element, each a list of statements, run in
/// order once each (``PostgresGatewayStore/migrate()``). A change is a new migration at the end; one
/// that has run on any database is never edited.
extension PostgresGatewayStore {
    /// The lock every node takes to migrate (any number, the same for all).
    static let migrationLock: Int64 = 0x756e_6f74_6966_79

    /// The schema, one migration an element, each a list of statements.
    static let migrations: [[String]] = [
        [
            "CREATE TABLE team (team_id TEXT PRIMARY KEY NOT NULL, name TEXT NOT NULL)",
            """
            CREATE TABLE signing_key (
                key_id TEXT PRIMARY KEY NOT NULL,
                team_id TEXT NOT NULL REFERENCES team(team_id) ON DELETE CASCADE,
                environment TEXT CHECK (environment IN ('sandbox', 'production')),
                bundle_identifiers TEXT,
                public_key TEXT NOT NULL
            )
            """,
            """
            CREATE TABLE app (
                bundle_identifier TEXT PRIMARY KEY NOT NULL,
                team_id TEXT NOT NULL REFERENCES team(team_id) ON DELETE CASCADE,
                latest_only BOOLEAN NOT NULL DEFAULT FALSE
            )
            """,
            """
            CREATE TABLE device (
                device_id TEXT PRIMARY KEY NOT NULL,
                secret_hash TEXT NOT NULL,
                created_at DOUBLE PRECISION NOT NULL,
                removed_at DOUBLE PRECISION,
                disabled BOOLEAN NOT NULL DEFAULT FALSE,
                reported_through BIGINT NOT NULL DEFAULT 0
            )
            """,
            """
            CREATE TABLE registration (
                token TEXT PRIMARY KEY NOT NULL,
                device_id TEXT NOT NULL REFERENCES device(device_id) ON DELETE CASCADE,
                bundle_identifier TEXT NOT NULL,
                environment TEXT NOT NULL CHECK (environment IN ('sandbox', 'production')),
                registered_at DOUBLE PRECISION NOT NULL,
                unregistered_at DOUBLE PRECISION
            )
            """,
            "CREATE INDEX registration_device ON registration(device_id, bundle_identifier, environment)",
            """
            CREATE TABLE push (
                sequence BIGSERIAL PRIMARY KEY,
                device_id TEXT NOT NULL REFERENCES device(device_id) ON DELETE CASCADE,
                token TEXT NOT NULL,
                bundle_identifier TEXT NOT NULL,
                environment TEXT NOT NULL CHECK (environment IN ('sandbox', 'production')),
                apns_id TEXT NOT NULL,
                push_type TEXT NOT NULL,
                priority INTEGER NOT NULL,
                expires_at DOUBLE PRECISION NOT NULL,
                collapse_id TEXT,
                payload BYTEA NOT NULL,
                received_at DOUBLE PRECISION NOT NULL,
                held BOOLEAN NOT NULL DEFAULT FALSE,
                unique_id TEXT
            )
            """,
            "CREATE INDEX push_device ON push(device_id, sequence)",
            "CREATE INDEX push_collapse ON push(token, collapse_id) WHERE collapse_id IS NOT NULL",
            "CREATE INDEX push_expiry ON push(expires_at)",
            "CREATE INDEX push_held ON push(device_id, priority DESC, sequence) WHERE held",
            """
            CREATE TABLE delivery (
                unique_id TEXT PRIMARY KEY NOT NULL,
                apns_id TEXT NOT NULL,
                team_id TEXT NOT NULL,
                credential TEXT NOT NULL,
                bundle_identifier TEXT NOT NULL,
                environment TEXT NOT NULL CHECK (environment IN ('sandbox', 'production')),
                device_id TEXT NOT NULL,
                token TEXT NOT NULL,
                push_type TEXT NOT NULL,
                priority INTEGER NOT NULL,
                payload_bytes INTEGER NOT NULL,
                collapse_id TEXT,
                expires_at DOUBLE PRECISION NOT NULL,
                accepted_at DOUBLE PRECISION NOT NULL,
                stored_at DOUBLE PRECISION,
                held BOOLEAN NOT NULL
            )
            """,
            "CREATE INDEX delivery_apns_id ON delivery(apns_id)",
            "CREATE INDEX delivery_accepted_at ON delivery(accepted_at)",
            """
            CREATE TABLE delivery_stage (
                id BIGSERIAL PRIMARY KEY,
                unique_id TEXT NOT NULL REFERENCES delivery(unique_id) ON DELETE CASCADE,
                at DOUBLE PRECISION NOT NULL,
                stage TEXT NOT NULL,
                detail TEXT
            )
            """,
            "CREATE INDEX delivery_stage_push ON delivery_stage(unique_id, id)",
        ],
        [
            // Nodes running now (each says so every few seconds), the device links each holds, and
            // every token's bucket of pushes for `429 TooManyRequests` across nodes.
            "CREATE TABLE gateway_node (node_id TEXT PRIMARY KEY NOT NULL, seen_at DOUBLE PRECISION NOT NULL)",
            """
            CREATE TABLE device_link (
                device_id TEXT PRIMARY KEY NOT NULL,
                node_id TEXT NOT NULL,
                linked_at DOUBLE PRECISION NOT NULL
            )
            """,
            "CREATE INDEX device_link_node ON device_link(node_id)",
            "CREATE TABLE token_bucket (token TEXT PRIMARY KEY NOT NULL, tokens DOUBLE PRECISION NOT NULL, updated_at DOUBLE PRECISION NOT NULL)",
            "CREATE INDEX token_bucket_updated_at ON token_bucket(updated_at)",
        ],
        [
            """
            CREATE TABLE broadcast_channel (
                channel_id TEXT PRIMARY KEY NOT NULL,
                bundle_identifier TEXT NOT NULL,
                environment TEXT NOT NULL CHECK (environment IN ('sandbox', 'production')),
                stores_most_recent BOOLEAN NOT NULL,
                push_type TEXT NOT NULL,
                created_at DOUBLE PRECISION NOT NULL
            )
            """,
            "CREATE INDEX broadcast_channel_app ON broadcast_channel(bundle_identifier, environment, created_at)",
            """
            CREATE TABLE channel_subscription (
                channel_id TEXT NOT NULL REFERENCES broadcast_channel(channel_id) ON DELETE CASCADE,
                device_id TEXT NOT NULL REFERENCES device(device_id) ON DELETE CASCADE,
                subscribed_at DOUBLE PRECISION NOT NULL,
                PRIMARY KEY (channel_id, device_id)
            )
            """,
            "ALTER TABLE push ADD COLUMN channel_id TEXT",
            "CREATE INDEX push_channel ON push(channel_id) WHERE channel_id IS NOT NULL",
        ],
        [
            // For the delivery log's housekeeping: whether an old entry's push is still stored, looked
            // up instead of every stored push listed.
            "CREATE INDEX push_unique ON push(unique_id) WHERE unique_id IS NOT NULL",
        ],
        [
            // The tries of a push its device did not take (``GatewayStore/noteNotTaken``).
            "ALTER TABLE push ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0",
        ],
        [
            // When each device last held a link: its tokens' expiry counts from it.
            "ALTER TABLE device ADD COLUMN last_linked_at DOUBLE PRECISION",
        ],
        [
            // Changes announced to the running nodes (``ChangeAnnouncement``), and what each has read.
            "CREATE TABLE gateway_change (id INTEGER PRIMARY KEY CHECK (id = 1), number BIGINT NOT NULL)",
            "INSERT INTO gateway_change (id, number) VALUES (1, 0)",
            // -1: a node (or a command's connection) that does not follow changes.
            "ALTER TABLE gateway_node ADD COLUMN change_read BIGINT NOT NULL DEFAULT -1",
        ],
        [
            // What each push costs to store. Its device's row is locked by the batch that stores it,
            // and no device is ever deleted: the foreign key's check (a lookup and a lock a push) adds
            // nothing. A device's held pushes are few, found by push_device: an index of them written
            // for every push held is not worth its writes.
            "ALTER TABLE push DROP CONSTRAINT IF EXISTS push_device_id_fkey",
            "DROP INDEX IF EXISTS push_held",
            // The delivery log's housekeeping runs a minute apart: whether an old entry's push is still
            // stored is one hash of the stored pushes' identifiers then, not an index written for every
            // push; entries are written in the order they are accepted, so a block range index finds
            // the old ones at a fraction of a B-tree's cost per push.
            "DROP INDEX IF EXISTS push_unique",
            "DROP INDEX IF EXISTS delivery_accepted_at",
            "CREATE INDEX delivery_accepted_at ON delivery USING brin (accepted_at)",
            // What a token's bucket gave at its last take (returned by the one statement that takes).
            "ALTER TABLE token_bucket ADD COLUMN taken INTEGER NOT NULL DEFAULT 0",
            // A take rewrites the bucket's row: with no index on its time and room on its page, in
            // place of a new row and index entries (a heap-only update). Full buckets are forgotten
            // by a scan a minute.
            "DROP INDEX IF EXISTS token_bucket_updated_at",
            "ALTER TABLE token_bucket SET (fillfactor = 50)",
        ],
    ]
}
