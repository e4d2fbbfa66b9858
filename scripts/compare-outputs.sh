#!/usr/bin/env bash
# Usage: scripts/compare-outputs.sh BEFORE AFTER
# Runs the same `harvey rag|kb|memory|model` commands with two harvey binaries, each in a fresh
# fixture workspace and HOME at the same path (so paths in the output agree), and diffs
# stdout, stderr and exit codes byte for byte. Only timestamps and timings are masked.
# Needs the embedder models/all-MiniLM-L6-v2.gguf and the sqlite3 shell (for the Go stores);
# no chat model is loaded except its header (model list/show) and vocabulary (memory recall).
set -euo pipefail

[[ $# -eq 2 ]] || { echo "usage: $0 BEFORE AFTER" >&2; exit 2; }
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
before=$(realpath "$1")
after=$(realpath "$2")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The fixture workspace: notes, a Go RAG store and a Go knowledge base to import, the models.
make_workspace() {
    local ws=$1
    mkdir -p "$ws/docs" "$ws/agents/rag" "$ws/models"
    printf '# Deploy\n\nThe staging host is rebuilt every night at two.\nRun make deploy from the repository root.\n' >"$ws/docs/deploy.md"
    printf '# Testing\n\nThe test suite runs with cargo test --release.\nA slow test is marked with #[ignore].\n' >"$ws/docs/testing.md"
    printf 'Shopping list: coffee, bread, olive oil.\nCall the plumber on Tuesday.\n' >"$ws/notes.txt"
    ln -s "$root/models/all-MiniLM-L6-v2.gguf" "$ws/models/all-MiniLM-L6-v2.gguf"
    ln -s "$root/models/SmolLM2-135M-Instruct.Q4_1.gguf" "$ws/models/SmolLM2-135M-Instruct.Q4_1.gguf"
    sqlite3 "$ws/agents/rag/gonotes.db" "CREATE TABLE chunks(id INTEGER PRIMARY KEY, content TEXT NOT NULL,
        embedding BLOB NOT NULL, source TEXT NOT NULL DEFAULT '');
        INSERT INTO chunks(content, embedding, source) VALUES
        ('The changelog is generated from the merged pull requests.', x'00', 'docs/changelog.md');"
    sqlite3 "$ws/agents/knowledge.db" "CREATE TABLE projects(id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL UNIQUE);
        CREATE TABLE observations(id INTEGER PRIMARY KEY AUTOINCREMENT, project_id INTEGER,
        kind TEXT NOT NULL DEFAULT 'note', body TEXT NOT NULL);
        INSERT INTO projects(name) VALUES ('site');
        INSERT INTO observations(project_id, body) VALUES (1, 'The staging host is rebuilt nightly.');"
}

# One line per command: the arguments after `harvey`.
commands() {
    cat <<'EOF'
model list
model list --json
model show
model show --json
model show all-MiniLM-L6-v2.gguf
model show no-such-model.gguf
memory status
memory add --type project_fact --description "The staging host is rebuilt nightly" --summary "Rebuilt at two" --tags deploy,staging
memory add --type tool_use --description "Run git init when git reports not a repository" --kind pitfall --action "Run git init" --confidence 0.7
memory add --type workflow --description "Tests run in release mode" --tags test --json
memory add --type nonsense --description "bad type"
memory list
memory list --json
memory status
memory index
memory recall "staging host"
memory recall "git repository" --json
memory recall "deploy" --budget 200
memory rebuild
memory export
rag list
rag new docs
rag new scratch
rag list
rag use docs
rag ingest docs notes.txt
rag ingest docs --json
rag status
rag status docs --json
rag query "when is the staging host rebuilt"
rag query "cargo test" --json -k 2
rag off
rag on
rag import gonotes
rag list
rag query "changelog" --store gonotes
rag prune
rag drop scratch
rag list
kb status
kb project list
kb project add web "The web site"
kb project use web
kb observe "The cache is cleared on deploy" --kind finding
kb observe "Why is the build slow?" --kind question --json
kb concept add caching "Keeping results"
kb concept list
kb link 1 caching
kb search "cache"
kb import
kb import --json
kb status
kb project add web "The web site"
kb project use web
kb observe "The cache is cleared on deploy" --kind finding
kb observe "Why is the build slow?" --kind question --json
kb concept add caching "Keeping results"
kb concept list
kb link 2 caching
kb search "cache"
kb search "staging" --json
kb project list
kb status
memory recall "cache deploy"
EOF
}

run_all() {
    local bin=$1 out=$2 base=$tmp/run
    rm -rf "$base"
    mkdir -p "$base/home" "$base/bin"
    cp "$bin" "$base/bin/harvey"
    make_workspace "$base/ws"
    : >"$out"
    local n=0
    while IFS= read -r line; do
        n=$((n + 1))
        eval "set -- $line"
        local code=0
        (cd "$base/ws" && HOME="$base/home" HARVEY_MODEL= RUST_LOG= \
            "$base/bin/harvey" "$@" >"$tmp/stdout" 2>"$tmp/stderr" </dev/null) || code=$?
        {
            printf '### %d: harvey %s\n--- exit %d\n--- stdout\n' "$n" "$line" "$code"
            cat "$tmp/stdout"
            printf -- '--- stderr\n'
            cat "$tmp/stderr"
        } >>"$out"
    done < <(commands)
    # The files the commands left behind, minus the databases' bytes.
    printf '### files\n' >>"$out"
    (cd "$base/ws" && find . -path ./models -prune -o -type f -print | LC_ALL=C sort) >>"$out"
}

# Timestamps, timings and memory ids (six random hex digits) differ from run to run, and so do
# the last digits of a JSON score (its recency prior reads the clock); nothing else may.
mask() {
    sed -E -e 's/\b(workspace_profile|project_fact|tool_use|workflow|user_preference)_[0-9a-f]{6}\b/\1_<ID>/g' \
        -e 's/"seconds":[0-9.e-]+/"seconds":<DUR>/g' -e 's/"created":[1-9][0-9]+/"created":<TIME>/g' \
        -e 's/("score": ?-?[0-9]+\.[0-9]{6})[0-9]+/\1…/g' \
        -e 's/[0-9]{4}-[0-9]{2}-[0-9]{2}[T ][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?(Z|[+-][0-9]{2}:?[0-9]{2})?/<TIME>/g' \
        -e 's/[0-9]+(\.[0-9]+)? ?(ms|µs|s)\b/<DUR>/g' "$1"
}

run_all "$before" "$tmp/before.raw"
run_all "$after" "$tmp/after.raw"
mask "$tmp/before.raw" >"$tmp/before.txt"
mask "$tmp/after.raw" >"$tmp/after.txt"
if diff -u "$tmp/before.txt" "$tmp/after.txt"; then
    echo "same: $(grep -c '^### [0-9]' "$tmp/before.txt") commands, stdout, stderr and exit codes identical"
else
    echo "DIFFERENT (see the diff above)" >&2
    exit 1
fi
