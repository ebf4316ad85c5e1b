# SPDX-License-Identifier: MIT
"""Where the Python package's output goes: the rule every erg command follows (liberg's
erg_output_check, docs/guarantees.md), so `python3 -m erg.run --out`, `erg report`, `erg instrument -o` and
the records a patched script appends treat a path as `erg ... -o PATH` does.

- A path that does not exist, or a regular file, is written whole (a temporary file in the same
  folder, then rename) or appended to (records).
- A symlink is never replaced: the file it points to is written; a symlink to a missing file is
  refused (nothing is created behind it).
- A FIFO or a character device (/dev/null, /dev/stdout's terminal or pipe) is written into; a FIFO
  waits for its reader, like any Unix writer.
- A folder, a block device or anything else is refused.
"""
import os
import stat
import tempfile


class OutputError(Exception):
    """The path cannot be written under the rule above; str() is the message, led by the path."""


def target(path):
    """(real, stream) for an output path: real is the path to write (the symlink's target when
    path is one), stream is True for a FIFO or character device (written into, not replaced).
    Raises OutputError naming path and the reason."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return path, False
    except OSError as e:
        raise OutputError("%s: %s" % (path, e.strerror)) from None
    real = path
    if stat.S_ISLNK(st.st_mode):
        real = os.path.realpath(path)
        try:
            st = os.stat(real)
        except FileNotFoundError:
            raise OutputError("%s: a symlink to a missing file: not written" % path) from None
        except OSError as e:
            raise OutputError("%s: %s" % (path, e.strerror)) from None
    m = st.st_mode
    if stat.S_ISREG(m):
        return real, False
    if stat.S_ISFIFO(m) or stat.S_ISCHR(m):
        return real, True
    if stat.S_ISDIR(m):
        raise OutputError("%s: is a folder, not a file" % path)
    if stat.S_ISBLK(m):
        raise OutputError("%s: is a block device: erg does not write there" % path)
    raise OutputError("%s: not a regular file, FIFO or character device: not written" % path)


def write_whole(path, text, prefix=".erg-"):
    """Write text (str, UTF-8) to path whole or not at all under the rule above. Raises
    OutputError for a refused path, OSError when writing fails (no temporary file is left)."""
    real, stream = target(path)
    if stream:
        with open(real, "w", encoding="utf-8") as f:
            f.write(text)
        return
    fd, tmp = tempfile.mkstemp(prefix=prefix, suffix=".tmp", dir=os.path.dirname(
        os.path.abspath(real)))
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, real)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def append(path, text):
    """Append text (str, UTF-8) to path under the rule above (a missing file is created, 0644).
    Raises OutputError for a refused path, OSError when opening or writing fails."""
    real, stream = target(path)
    flags = os.O_WRONLY | os.O_APPEND
    if not stream:
        flags |= os.O_CREAT | os.O_NOFOLLOW  # real is resolved: a link put there since is refused
    fd = os.open(real, flags, 0o644)
    try:
        m = os.fstat(fd).st_mode
        if not (stat.S_ISREG(m) or stat.S_ISFIFO(m) or stat.S_ISCHR(m)):
            raise OutputError("%s: not a regular file, FIFO or character device: not written"
                              % path)
        data = text.encode()
        while data:
            n = os.write(fd, data)
            data = data[n:]
    finally:
        os.close(fd)
