#!/bin/sh
# Add Kepler Lab's bundle to your desktop's application menu (per user, no root needed).
#
#   ./install.sh              install: menu entry, icons, AppStream metadata, and a
#                             `keplerlab` command in ~/.local/bin
#   ./install.sh --uninstall  remove exactly what install put there (the bundle stays)
#   ./install.sh --help
#
# Run it from the unpacked bundle (the folder holding the `keplerlab` executable); the menu
# entry points at the bundle where it is, so move the folder first if you want it elsewhere.
# Files go where the XDG Base Directory specification says: $XDG_DATA_HOME (default
# ~/.local/share) for applications/, icons/hicolor/ and metainfo/.
set -eu

APP_ID="io.github.keplerlab.KeplerLab"
BUNDLE="$(cd "$(dirname "$0")" && pwd)"
DATA_HOME="${XDG_DATA_HOME:-$HOME/.local/share}"
BIN_HOME="${KEPLERLAB_BIN_DIR:-$HOME/.local/bin}"
SIZES="16 32 48 64 128 256 512"

usage() { sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; }
say() { echo "install: $*"; }
die() { echo "install: error: $*" >&2; exit 1; }

refresh_caches() {
    # Optional tools: menus pick up the changes without them at the next login.
    command -v update-desktop-database >/dev/null 2>&1 && update-desktop-database -q "$DATA_HOME/applications" 2>/dev/null || true
    command -v gtk-update-icon-cache >/dev/null 2>&1 && gtk-update-icon-cache -q -t "$DATA_HOME/icons/hicolor" 2>/dev/null || true
}

install_files() {
    [ -x "$BUNDLE/keplerlab" ] || die "no keplerlab executable beside this script ($BUNDLE); run it from the unpacked bundle"
    [ -f "$BUNDLE/share/applications/$APP_ID.desktop" ] || die "$BUNDLE/share/applications/$APP_ID.desktop is missing; is this a complete bundle?"
    case "$BUNDLE" in
        *[\ \"\'\\\$\`%]*) die "the bundle's path '$BUNDLE' has a space or quote; move it to a plain path first" ;;
    esac

    mkdir -p "$DATA_HOME/applications" "$DATA_HOME/metainfo" "$BIN_HOME"
    # The desktop entry, with Exec/TryExec pointing at this bundle's executable.
    sed -e "s|^Exec=keplerlab|Exec=$BUNDLE/keplerlab|" -e "s|^TryExec=keplerlab|TryExec=$BUNDLE/keplerlab|" \
        "$BUNDLE/share/applications/$APP_ID.desktop" > "$DATA_HOME/applications/$APP_ID.desktop"
    cp "$BUNDLE/share/metainfo/$APP_ID.metainfo.xml" "$DATA_HOME/metainfo/$APP_ID.metainfo.xml"
    for size in $SIZES; do
        mkdir -p "$DATA_HOME/icons/hicolor/${size}x${size}/apps"
        cp "$BUNDLE/share/icons/hicolor/${size}x${size}/apps/$APP_ID.png" "$DATA_HOME/icons/hicolor/${size}x${size}/apps/$APP_ID.png"
    done
    mkdir -p "$DATA_HOME/icons/hicolor/scalable/apps"
    cp "$BUNDLE/share/icons/hicolor/scalable/apps/$APP_ID.svg" "$DATA_HOME/icons/hicolor/scalable/apps/$APP_ID.svg"
    ln -sfn "$BUNDLE/keplerlab" "$BIN_HOME/keplerlab"
    refresh_caches
    say "installed Kepler Lab from $BUNDLE"
    say "menu entry: $DATA_HOME/applications/$APP_ID.desktop"
    say "command:    $BIN_HOME/keplerlab"
    case ":$PATH:" in *":$BIN_HOME:"*) ;; *) say "note: $BIN_HOME is not on your PATH" ;; esac
}

uninstall_files() {
    rm -f "$DATA_HOME/applications/$APP_ID.desktop" "$DATA_HOME/metainfo/$APP_ID.metainfo.xml" \
          "$DATA_HOME/icons/hicolor/scalable/apps/$APP_ID.svg"
    for size in $SIZES; do
        rm -f "$DATA_HOME/icons/hicolor/${size}x${size}/apps/$APP_ID.png"
    done
    # The command only if it is our link (never a keplerlab installed some other way).
    if [ -L "$BIN_HOME/keplerlab" ] && [ "$(readlink "$BIN_HOME/keplerlab")" = "$BUNDLE/keplerlab" ]; then
        rm -f "$BIN_HOME/keplerlab"
    fi
    refresh_caches
    say "removed Kepler Lab's menu entry, icons and metadata from $DATA_HOME (the bundle in $BUNDLE stays)"
}

case "${1:-}" in
    "") install_files ;;
    --uninstall|uninstall) uninstall_files ;;
    -h|--help) usage ;;
    *) die "unknown option '$1' (use --uninstall or --help)" ;;
esac
