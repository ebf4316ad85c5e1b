# SPDX-License-Identifier: MIT
"""erg._out: the Python package writes output by the rule liberg's erg_output_check sets for every
erg command (docs/guarantees.md): a symlink's target is written and the link stays, a symlink to a
missing file is refused with nothing created, a FIFO and a character device are written into, a
folder is refused; whole files leave no temporary behind. append_records (what a patched script and
erg run use) follows the same rule."""
import os
import stat
import tempfile
import threading
import unittest
import shutil

from erg import _out, _records


class Out(unittest.TestCase):
    def setUp(self):
        self.d = tempfile.mkdtemp(prefix="erg-out-")

    def tearDown(self):
        shutil.rmtree(self.d)

    def p(self, name):
        return os.path.join(self.d, name)

    def read(self, name):
        with open(self.p(name)) as f:
            return f.read()

    def test_new_and_regular_files_are_written_whole(self):
        _out.write_whole(self.p("a.json"), "one\n")
        self.assertEqual(self.read("a.json"), "one\n")
        _out.write_whole(self.p("a.json"), "two\n")
        self.assertEqual(self.read("a.json"), "two\n")
        self.assertEqual(stat.S_IMODE(os.stat(self.p("a.json")).st_mode), 0o644)
        self.assertEqual(sorted(os.listdir(self.d)), ["a.json"])  # no temporary left

    def test_symlink_target_is_written_and_link_kept(self):
        os.mkdir(self.p("sub"))
        with open(self.p("sub/t.json"), "w") as f:
            f.write("old\n")
        os.symlink(os.path.join("sub", "t.json"), self.p("link.json"))
        _out.write_whole(self.p("link.json"), "new\n")
        self.assertTrue(os.path.islink(self.p("link.json")))
        self.assertEqual(self.read("sub/t.json"), "new\n")
        # the temporary went next to the target, and is gone
        self.assertEqual(sorted(os.listdir(self.p("sub"))), ["t.json"])
        self.assertTrue(_records.append_records(self.p("link.json"), "more\n"))
        self.assertEqual(self.read("sub/t.json"), "new\nmore\n")
        self.assertTrue(os.path.islink(self.p("link.json")))

    def test_dangling_symlink_and_folder_are_refused(self):
        os.symlink(self.p("missing.json"), self.p("dangling.json"))
        with self.assertRaises(_out.OutputError) as e:
            _out.write_whole(self.p("dangling.json"), "x")
        self.assertEqual(str(e.exception),
                         "%s: a symlink to a missing file: not written" % self.p("dangling.json"))
        self.assertFalse(os.path.lexists(self.p("missing.json")))
        with self.assertRaises(_out.OutputError):
            _out.append(self.p("dangling.json"), "x")
        self.assertFalse(os.path.lexists(self.p("missing.json")))
        os.mkdir(self.p("dir"))
        with self.assertRaises(_out.OutputError) as e:
            _out.write_whole(self.p("dir"), "x")
        self.assertEqual(str(e.exception), "%s: is a folder, not a file" % self.p("dir"))
        self.assertEqual(os.listdir(self.p("dir")), [])
        # append_records says so on stderr and returns False; nothing created
        self.assertFalse(_records.append_records(self.p("dangling.json"), "x\n"))
        self.assertEqual(sorted(os.listdir(self.d)), ["dangling.json", "dir"])

    def test_fifo_is_written_into_not_replaced(self):
        fifo = self.p("fifo")
        os.mkfifo(fifo)
        got = []

        def reader():
            with open(fifo) as f:
                got.append(f.read())

        for write in (lambda: _out.write_whole(fifo, "whole\n"),
                      lambda: self.assertTrue(_records.append_records(fifo, "records\n"))):
            t = threading.Thread(target=reader)
            t.start()
            write()
            t.join(30)
            self.assertFalse(t.is_alive())
            self.assertTrue(stat.S_ISFIFO(os.lstat(fifo).st_mode))
        self.assertEqual(got, ["whole\n", "records\n"])
        self.assertEqual(sorted(os.listdir(self.d)), ["fifo"])

    def test_character_device_is_written_into(self):
        self.assertEqual(_out.target("/dev/null"), ("/dev/null", True))
        _out.write_whole("/dev/null", "x")
        self.assertTrue(_records.append_records("/dev/null", "x\n"))
        self.assertTrue(stat.S_ISCHR(os.stat("/dev/null").st_mode))


if __name__ == "__main__":
    unittest.main()
