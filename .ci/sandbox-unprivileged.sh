#!/usr/bin/env bash
# The sandbox battery once more as an unprivileged user (issue 19, item 4): a daemon started by a
# normal user is the common case, and it differs from root's (bwrap makes a user namespace; there
# are no capabilities to drop; /proc/sys is not the user's to write anyway). CI clones under a
# root-owned directory the user cannot read, so the battery runs from a copy of the checkout (as
# installed: node_modules' links are relative) that the user owns.
set -euo pipefail
cd "$(dirname "$0")/.."
user=klbrtest
id -u "$user" >/dev/null 2>&1 || useradd --create-home --shell /bin/bash "$user"
home=$(getent passwd "$user" | cut -d: -f6)
copy="$home/klbr"
rm -rf "$copy"
mkdir -p "$copy"
tar -C . --exclude=./.git -cf - . | tar -C "$copy" -xf -
chown -R "$user:" "$copy"

as_user() {
  runuser -u "$user" -- env -i HOME="$home" PATH=/usr/local/bin:/usr/bin:/bin LANG=C.UTF-8 CI=true \
    TURBO_TELEMETRY_DISABLED=1 DO_NOT_TRACK=1 PYTHONDONTWRITEBYTECODE=1 "$@"
}
# The workers need a Python 3.11+ the user can run (root's may live under /root, e.g. pyenv).
if ! as_user python3 -c 'import sys; assert sys.version_info >= (3, 11)' 2>/dev/null; then
  echo "sandbox-unprivileged: $user has no python3 >= 3.11 on /usr/local/bin:/usr/bin:/bin" >&2
  exit 1
fi
echo "sandbox battery as $(as_user id -un) (uid $(as_user id -u))"
limits="--testTimeout=60000 --hookTimeout=180000"
as_user bash -c "cd '$copy/apps/host' && '$copy/node_modules/.bin/vitest' run $limits test/sandbox"
as_user bash -c "cd '$copy/packages/supervisor' && '$copy/node_modules/.bin/vitest' run $limits test/python-sandbox.test.ts test/guard-window.test.ts"
