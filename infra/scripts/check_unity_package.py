"""Fails on a Unity package Unity would not import whole (run by infra/test.sh): every
file and folder of clients/csharp that Unity imports needs a `.meta` beside it with a
GUID of its own (Unity ignores an asset without one in an immutable package, so "Add
package from git URL" imported nothing), and no `.meta` may name nothing. Unity skips
names that start with `.` or end with `~` (`Tests~`, `bin~`), and so does this check.

Usage: check_unity_package.py [PACKAGE_DIR] [--write]
  --write  adds the missing `.meta` files, each with a GUID derived from the package's
           name and the asset's path (stable: the same file gets the same GUID anywhere)
"""

import hashlib
import json
import pathlib
import re
import sys

IMPORTERS = {
    ".cs": "MonoImporter:\n  externalObjects: {}\n  serializedVersion: 2\n  defaultReferences: []\n"
           "  executionOrder: 0\n  icon: {instanceID: 0}\n",
    ".asmdef": "AssemblyDefinitionImporter:\n  externalObjects: {}\n",
    ".json": "PackageManifestImporter:\n  externalObjects: {}\n",
    ".md": "TextScriptImporter:\n  externalObjects: {}\n",
}
TAIL = "  userData: \n  assetBundleName: \n  assetBundleVariant: \n"
GUID = re.compile(r"^guid: ([0-9a-f]{32})$", re.MULTILINE)


def hidden(rel):
    return any(part.startswith(".") or part.endswith("~") for part in rel.parts)


def assets(root):
    """What Unity imports under `root`: files and folders, by path relative to it."""
    return sorted(p.relative_to(root) for p in root.rglob("*")
                  if not hidden(p.relative_to(root)) and p.suffix != ".meta")


def meta_text(root, rel):
    name = json.loads((root / "package.json").read_text())["name"]
    guid = hashlib.md5(f"{name}/{rel.as_posix()}".encode()).hexdigest()
    if (root / rel).is_dir():
        body = "folderAsset: yes\nDefaultImporter:\n  externalObjects: {}\n"
    else:
        body = IMPORTERS.get(rel.suffix, "DefaultImporter:\n  externalObjects: {}\n")
    return f"fileFormatVersion: 2\nguid: {guid}\n{body}{TAIL}"


def problems(root, write=False):
    out = []
    for rel in assets(root):
        meta = root / f"{rel}.meta"
        if not meta.exists():
            if write:
                meta.write_text(meta_text(root, rel))
            else:
                out.append(f"{rel}: no {rel.name}.meta beside it (--write adds one)")
    seen = {}
    for meta in sorted(root.rglob("*.meta")):
        rel = meta.relative_to(root)
        if hidden(rel):
            continue
        if not meta.with_suffix("").exists():
            out.append(f"{rel}: names no file or folder")
        m = GUID.search(meta.read_text())
        if not m:
            out.append(f"{rel}: no guid of 32 hex digits")
        elif m.group(1) in seen:
            out.append(f"{rel}: guid {m.group(1)} is {seen[m.group(1)]}'s too")
        else:
            seen[m.group(1)] = rel
        if meta.with_suffix("").is_dir() and "folderAsset: yes" not in meta.read_text():
            out.append(f"{rel}: a folder's .meta without folderAsset: yes")
    return out


def main():
    args = [a for a in sys.argv[1:] if a != "--write"]
    root = pathlib.Path(args[0] if args else "clients/csharp").resolve()
    found = problems(root, write="--write" in sys.argv)
    for p in found:
        print(f"{root.name}/{p}")
    if found:
        sys.exit(f"{len(found)} problems in the Unity package (above)")


if __name__ == "__main__":
    main()
