#!/bin/sh
# Installs phoneuse-runtime in Termux, as a service that starts at boot.
#
#   sh termux/install.sh                 # from a checkout of phoneuse-runtime
#   PHONEUSE_SOURCE=phoneuse-runtime sh install.sh    # from PyPI instead
#
# What it does, in order:
#   1. pkg install the native parts: grpcio must come from pkg (pip cannot build it on Android),
#      and so do pillow, lxml and pydantic-core; plus Termux:API's commands, termux-services
#      (runit) and android-tools (adb, for the phone's own adb over wireless debugging);
#   2. checks that pkg's grpcio is new enough for this package's generated stubs;
#   3. pip installs phoneuse-runtime (its pure-Python dependencies come from PyPI), held to
#      pkg's grpcio version;
#   4. installs the runit service ($PREFIX/var/service/phoneuse-runtime, logs in
#      $PREFIX/var/log/sv/phoneuse-runtime) and the Termux:Boot script (~/.termux/boot/);
#   5. starts the service when runit is running.
# termux/README.md says what to do on the phone afterwards (apps, permissions, wireless debugging).
set -eu

GRPCIO_MIN=1.81.1  # the generated stubs' minimum (pyproject.toml's grpcio>=)
PACKAGES="python python-pip python-grpcio python-pillow python-lxml python-pydantic-core termux-api termux-services android-tools"
SERVICE=phoneuse-runtime

if [ -z "${PREFIX:-}" ] || [ ! -d "$PREFIX/bin" ]; then
    echo "install.sh: run this inside Termux (\$PREFIX is not set to Termux's usr directory)" >&2
    exit 1
fi
HERE=$(cd "$(dirname "$0")" && pwd)
SOURCE=${PHONEUSE_SOURCE:-$(dirname "$HERE")}

echo "==> pkg install $PACKAGES"
# shellcheck disable=SC2086  # the package list is split on purpose
pkg install -y $PACKAGES

have=$(python -c 'import grpc; print(grpc.__version__)' 2>/dev/null || echo none)
if [ "$have" = none ]; then
    echo "install.sh: python-grpcio is not importable after pkg install; run: pkg install python-grpcio" >&2
    exit 1
fi
lowest=$(printf '%s\n%s\n' "$GRPCIO_MIN" "$have" | sort -t. -k1,1n -k2,2n -k3,3n | head -n 1)
if [ "$lowest" != "$GRPCIO_MIN" ]; then
    echo "install.sh: pkg's grpcio is $have, but phoneuse-runtime needs $GRPCIO_MIN or newer;" \
        "run pkg upgrade, and if it is still older, wait for Termux's python-grpcio to catch up" >&2
    exit 1
fi

echo "==> pip install $SOURCE"
# pip must keep pkg's grpcio: grpcio-health-checking and -reflection are pinned to the same
# version, or pip would pick their newest and try (and fail) to build a newer grpcio.
constraints=$(mktemp "${TMPDIR:-$PREFIX/tmp}/phoneuse-constraints.XXXXXX")
printf 'grpcio==%s\ngrpcio-health-checking==%s\ngrpcio-reflection==%s\n' "$have" "$have" "$have" > "$constraints"
pip install --upgrade --constraint "$constraints" "$SOURCE"
rm -f "$constraints"

echo "==> the runit service: $PREFIX/var/service/$SERVICE"
target="$PREFIX/var/service/$SERVICE"
mkdir -p "$target/log" "$PREFIX/var/log/sv/$SERVICE"
for file in run log/run; do
    sed "s|@TERMUX_PREFIX@|$PREFIX|g" "$HERE/service/$SERVICE/$file" > "$target/$file.new"
    chmod 0755 "$target/$file.new"
    mv "$target/$file.new" "$target/$file"
done

echo "==> the Termux:Boot script: $HOME/.termux/boot/start-$SERVICE"
mkdir -p "$HOME/.termux/boot"
sed "s|@TERMUX_PREFIX@|$PREFIX|g" "$HERE/boot/start-$SERVICE" > "$HOME/.termux/boot/start-$SERVICE"
chmod 0755 "$HOME/.termux/boot/start-$SERVICE"

if SVDIR="$PREFIX/var/service" sv up "$SERVICE" 2>/dev/null; then
    echo "==> started: sv status $SERVICE; its log: $PREFIX/var/log/sv/$SERVICE/current"
else
    echo "==> runit is not running yet: open a new Termux session (or reboot, with Termux:Boot)," \
        "then: sv up $SERVICE"
fi
echo "==> next: termux/README.md (Termux:API and Termux:Boot apps, permissions, wireless debugging)," \
    "then: phoneuse-runtime doctor --device termux"
