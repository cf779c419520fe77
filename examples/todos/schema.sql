-- The todos example (examples/todos/README.md): the backend's own table, as it would have
-- it anyway. BatchDiff needs only a primary key of one column and wal_level=logical.
CREATE TABLE todos (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    owner      text NOT NULL,
    title      text NOT NULL,
    done       boolean NOT NULL DEFAULT false,
    position   integer NOT NULL DEFAULT 0,
    updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX todos_owner ON todos (owner);
