# SPDX-License-Identifier: MIT
"""`erg instrument SCRIPT.py --library torch [-o patched.py] [--project]`: static instrumentation
of a Python script in the manner of FECoM's Patcher (Rajput et al., Section 2.2), by `ast`.

Every call into the library is wrapped in a measurement window named by its qualified name and
call site: module functions through the script's import aliases (`torch.randn`, `nn.Linear`,
`F.relu`), methods of objects the library made (`x.sum()`, `opt.step()`), calls of such objects
(`model(x)`, `loss_fn(out, y)`), constructors of the script's subclasses of library classes
(`class MLP(nn.Module)`), and, beyond FECoM, objects returned by the script's own functions
(`model = make_model()` when make_model returns a library object) and passed into them as
arguments (`def train(model, loader)` called with library objects). Inferred callees are checked
again at run time (erg._rt), so an inference that is wrong costs a check, never a behaviour.

The script is edited as text at the positions ast gives, never re-generated: comments, layout and
line numbers stay as they were, so tracebacks point at the script's own lines. `f(a, b)` becomes
`__erg_call__("api|file:line:col", f, a, b)`: the callee and the arguments are evaluated where
and in the order they were. One statement is added, on the line of the script's first statement
(after its docstring and __future__ imports). Calls in f-strings, in annotations, and in functions
compiled from their source (torch.jit.script, torch.jit.trace_module) are left alone and listed as
skipped.

Exit status: 0 done; 2 bad input (a script that does not parse: the Python error with file, line
and column; a library the script does not import; an output that is the input, a device, a FIFO
or a symlink).
"""
import argparse
import ast
import io
import json
import os
import sys
import tokenize

from . import _out

HEADER = "import erg._rt as __erg_rt; __erg_call__ = __erg_rt.call; __erg_rt.start(%r%s); "
SOURCE_COMPILED = ("script", "trace", "trace_module", "compile", "script_method")


class BadInput(Exception):
    pass


class _Analysis(ast.NodeVisitor):
    """Import aliases, library classes, and which names hold library objects (a flow-insensitive
    fixed point over the whole module)."""

    def __init__(self, tree, library):
        self.tree = tree
        self.lib = library
        self.aliases = {}          # local name -> dotted library path
        self.lib_classes = set()   # the script's classes with a library base
        self.class_attrs = {}      # class name -> attribute names holding library objects
        self.lib_names = set()     # (scope id, name) holding library objects
        self.lib_funcs = set()     # the script's functions returning library objects
        self.funcs = {}            # name -> FunctionDef (module-level and methods by name)
        self.star = False
        self.parent = {}
        for node in ast.walk(tree):
            for ch in ast.iter_child_nodes(node):
                self.parent[ch] = node

    # -- scopes
    def scope_of(self, node):
        p = self.parent.get(node)
        while p is not None and not isinstance(p, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                   ast.Lambda, ast.Module)):
            p = self.parent.get(p)
        return p if p is not None else self.tree

    def enclosing_class(self, node):
        p = self.parent.get(node)
        while p is not None:
            if isinstance(p, ast.ClassDef):
                return p
            p = self.parent.get(p)
        return None

    # -- imports
    def collect_imports(self):
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    if a.name == self.lib or a.name.startswith(self.lib + "."):
                        if a.asname:
                            self.aliases[a.asname] = a.name
                        else:
                            top = a.name.split(".")[0]
                            self.aliases[top] = top
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                if node.module == self.lib or node.module.startswith(self.lib + "."):
                    for a in node.names:
                        if a.name == "*":
                            self.star = True
                        else:
                            self.aliases[a.asname or a.name] = node.module + "." + a.name

    def dotted(self, e):
        """The library path of an alias-rooted expression (torch.nn.functional.relu), or None."""
        parts = []
        while isinstance(e, ast.Attribute):
            parts.append(e.attr)
            e = e.value
        if isinstance(e, ast.Name) and e.id in self.aliases:
            if self.is_local_shadow(e):
                return None
            return ".".join([self.aliases[e.id]] + parts[::-1])
        return None

    def is_local_shadow(self, name_node):
        sc = self.scope_of(name_node)
        if sc is self.tree:
            return False
        return (id(sc), name_node.id) in self.assigned_locals

    # -- library-valued expressions
    def is_lib(self, e):
        if e is None:
            return False
        if isinstance(e, ast.Call):
            f = e.func
            if isinstance(f, ast.Name) and f.id == "super" and not e.args:
                cls = self.enclosing_class(e)       # super() in a subclass of a library class
                return cls is not None and cls.name in self.lib_classes
            if self.dotted(f) is not None:
                return True
            if isinstance(f, ast.Name) and (f.id in self.lib_classes or f.id in self.lib_funcs):
                return True
            if isinstance(f, ast.Attribute) and f.attr in self.lib_funcs and \
                    isinstance(f.value, ast.Name) and f.value.id == "self":
                return True
            return self.is_lib(f)
        if isinstance(e, ast.Attribute):
            if self.dotted(e) is not None:
                return True
            if isinstance(e.value, ast.Name) and e.value.id == "self":
                cls = self.enclosing_class(e)
                if cls is not None and e.attr in self.class_attrs.get(cls.name, ()):
                    return True
            return self.is_lib(e.value)
        if isinstance(e, ast.Subscript):
            return self.is_lib(e.value)
        if isinstance(e, ast.BinOp):
            return self.is_lib(e.left) or self.is_lib(e.right)
        if isinstance(e, ast.UnaryOp):
            return self.is_lib(e.operand)
        if isinstance(e, ast.Name):
            if e.id == "self":
                cls = self.enclosing_class(e)
                return cls is not None and cls.name in self.lib_classes
            sc = self.scope_of(e)
            if (id(sc), e.id) in self.lib_names:
                return True
            if (id(sc), e.id) not in self.assigned_locals and (id(self.tree), e.id) in \
                    self.lib_names:
                return True
            return False
        if isinstance(e, (ast.Tuple, ast.List)):
            return any(self.is_lib(x) for x in e.elts)
        if isinstance(e, ast.IfExp):
            return self.is_lib(e.body) or self.is_lib(e.orelse)
        if isinstance(e, ast.NamedExpr):
            return self.is_lib(e.value)
        if isinstance(e, (ast.ListComp, ast.GeneratorExp, ast.SetComp)):
            return self.is_lib(e.elt)
        if isinstance(e, ast.Await):
            return self.is_lib(e.value)
        return False

    def mark(self, target, scope):
        changed = False
        if isinstance(target, ast.Name):
            k = (id(scope), target.id)
            if k not in self.lib_names:
                self.lib_names.add(k)
                changed = True
        elif isinstance(target, (ast.Tuple, ast.List)):
            for t in target.elts:
                changed |= self.mark(t, scope)
        elif isinstance(target, ast.Starred):
            changed |= self.mark(target.value, scope)
        elif isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and \
                target.value.id == "self":
            cls = self.enclosing_class(target)
            if cls is not None:
                s = self.class_attrs.setdefault(cls.name, set())
                if target.attr not in s:
                    s.add(target.attr)
                    changed = True
        return changed

    def run(self):
        self.collect_imports()
        self.assigned_locals = set()
        for node in ast.walk(self.tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.funcs.setdefault(node.name, node)
                for a in node.args.args + node.args.kwonlyargs + node.args.posonlyargs:
                    self.assigned_locals.add((id(node), a.arg))
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                sc = self.scope_of(node)
                if sc is not self.tree:
                    self.assigned_locals.add((id(sc), node.id))
        changed = True
        rounds = 0
        while changed and rounds < 20:
            changed = False
            rounds += 1
            for node in ast.walk(self.tree):
                if isinstance(node, ast.ClassDef) and node.name not in self.lib_classes:
                    if any(self.dotted(b) is not None or
                           (isinstance(b, ast.Name) and b.id in self.lib_classes)
                           for b in node.bases):
                        self.lib_classes.add(node.name)
                        changed = True
                elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                    if node.value is not None and self.is_lib(node.value):
                        for t in targets:
                            changed |= self.mark(t, self.scope_of(node))
                elif isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
                    if self.is_lib(node.iter):
                        changed |= self.mark(node.target, self.scope_of(node))
                elif isinstance(node, (ast.With, ast.AsyncWith)):
                    for it in node.items:
                        if it.optional_vars is not None and self.is_lib(it.context_expr):
                            changed |= self.mark(it.optional_vars, self.scope_of(node))
                elif isinstance(node, ast.NamedExpr) and self.is_lib(node.value):
                    changed |= self.mark(node.target, self.scope_of(node))
                elif isinstance(node, ast.Return) and node.value is not None:
                    fn = self.scope_of(node)
                    if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) and \
                            fn.name not in self.lib_funcs and self.is_lib(node.value):
                        self.lib_funcs.add(fn.name)
                        changed = True
                elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                        node.func.id in self.funcs:
                    # arguments that are library objects make the parameter one (interprocedural)
                    fn = self.funcs[node.func.id]
                    params = fn.args.posonlyargs + fn.args.args
                    for a, p in zip(node.args, params):
                        if not isinstance(a, ast.Starred) and self.is_lib(a):
                            changed |= self.mark(ast.Name(id=p.arg, ctx=ast.Store()), fn)
                    names = {p.arg for p in params + fn.args.kwonlyargs}
                    for kw in node.keywords:
                        if kw.arg in names and self.is_lib(kw.value):
                            changed |= self.mark(ast.Name(id=kw.arg, ctx=ast.Store()), fn)


def _char_offsets(lines):
    """Per line, a function from a UTF-8 byte column (ast's) to a character column."""
    def conv(lineno, col):
        return len(lines[lineno - 1].encode("utf-8")[:col].decode("utf-8", "replace"))
    return conv


def plan(source, filename, library, project_only=False):
    """(edits, report): the text edits [(line, col, replace_len, text)] and what was done."""
    try:
        tree = ast.parse(source, filename)
    except SyntaxError as e:
        raise BadInput("%s:%s:%s: %s: %s" % (filename, e.lineno or 0, e.offset or 0,
                                             type(e).__name__, e.msg)) from None
    an = _Analysis(tree, library)
    an.run()
    if not an.aliases and not an.star:
        raise BadInput("%s: the script does not import '%s' (no 'import %s' or 'from %s import "
                       "...'): nothing to instrument" % (filename, library, library, library))
    lines = source.splitlines(keepends=True) or [""]
    conv = _char_offsets(lines)
    base = os.path.basename(filename)
    report = {"script": filename, "library": library, "wrapped": [], "skipped": [],
              "aliases": an.aliases, "library_classes": sorted(an.lib_classes),
              "library_functions": sorted(an.lib_funcs)}
    if an.star:
        report["skipped"].append({"site": "%s" % base, "reason": "'from %s import *': names it "
                                  "brings are not known statically" % library})

    # tokens: the '(' of each call
    toks = list(tokenize.generate_tokens(io.StringIO(source).readline))
    op_pos = {}
    opens = [(t.start, t.end) for t in toks if t.type == tokenize.OP and t.string == "("]
    import bisect
    open_starts = [s for s, _ in opens]

    def call_paren(call):
        fe = (call.func.end_lineno, conv(call.func.end_lineno, call.func.end_col_offset))
        i = bisect.bisect_left(open_starts, fe)
        return open_starts[i] if i < len(open_starts) else None

    closes = {}
    for t in toks:
        if t.type == tokenize.OP and t.string == ")":
            closes[t.end] = t.start

    skip_nodes = set()
    skip_reason = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            for ch in ast.walk(node):
                skip_nodes.add(ch)
                skip_reason[ch] = "inside an f-string"
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for d in node.decorator_list:
                dd = d.func if isinstance(d, ast.Call) else d
                path = an.dotted(dd) or ""
                if path.split(".")[-1] in SOURCE_COMPILED and ".jit" in path:
                    for ch in ast.walk(node):
                        if ch is not d and ch not in ast.walk(d):
                            skip_nodes.add(ch)
                            skip_reason[ch] = "in a function compiled from its source by %s" % path
            for a in ([node.returns] + [x.annotation for x in
                                        node.args.args + node.args.kwonlyargs +
                                        node.args.posonlyargs]):
                if a is not None:
                    for ch in ast.walk(a):
                        skip_nodes.add(ch)
                        skip_reason[ch] = "in an annotation"
        if isinstance(node, ast.AnnAssign):
            for ch in ast.walk(node.annotation):
                skip_nodes.add(ch)
                skip_reason[ch] = "in an annotation"

    edits = []
    if not project_only:
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            f = node.func
            api = an.dotted(f)
            how = "alias"
            if api is None:
                if isinstance(f, ast.Name) and f.id in ("super", "locals", "globals", "vars",
                                                        "eval", "exec", "dir"):
                    continue
                if isinstance(f, ast.Name) and f.id in an.lib_classes:
                    api, how = f.id, "subclass"
                elif isinstance(f, ast.Attribute) and an.is_lib(f.value):
                    api, how = "." + f.attr, "method"
                elif an.is_lib(f):
                    api, how = "", "object"
                else:
                    continue
            site = "%s:%d:%d" % (base, node.lineno, conv(node.lineno, node.col_offset) + 1)
            if node in skip_nodes:
                report["skipped"].append({"site": site, "api": api or ast.unparse(f),
                                          "reason": skip_reason[node]})
                continue
            paren = call_paren(node)
            if paren is None:
                report["skipped"].append({"site": site, "api": api,
                                          "reason": "call parenthesis not found"})
                continue
            start = (node.lineno, conv(node.lineno, node.col_offset))
            tag = json.dumps("%s|%s" % (api, site))
            sole_gen = (len(node.args) == 1 and not node.keywords and
                        isinstance(node.args[0], ast.GeneratorExp))
            edits.append((start, 0, "__erg_call__(%s, " % tag))
            if not node.args and not node.keywords:
                edits.append((paren, 1, ""))
            elif sole_gen:
                end = (node.end_lineno, conv(node.end_lineno, node.end_col_offset) - 1)
                edits.append((paren, 1, ", ("))
                edits.append((end, 0, ")"))
            else:
                edits.append((paren, 1, ", "))
            report["wrapped"].append({"site": site, "api": api if api and api[0] != "." else
                                      ast.unparse(f),
                                      "resolved": how})

    # the header, on the line of the first statement that is not a docstring or __future__
    body = tree.body
    i = 0
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) and \
            isinstance(body[0].value.value, str):
        i = 1
    while i < len(body) and isinstance(body[i], ast.ImportFrom) and \
            body[i].module == "__future__":
        i += 1
    header = HEADER % (library, ", project_only=True" if project_only else "")
    simple = (ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Import, ast.ImportFrom,
              ast.Pass, ast.Delete, ast.Global, ast.Nonlocal, ast.Assert, ast.Raise,
              ast.Return, ast.Break, ast.Continue)
    if i < len(body) and isinstance(body[i], simple) and not getattr(body[i], "decorator_list",
                                                                       None):
        st = body[i]
        edits.append(((st.lineno, conv(st.lineno, st.col_offset)), 0, header))
        report["header_line"] = st.lineno
    elif i < len(body):
        # a compound statement: the header goes on a line of its own just before it
        st = body[i]
        first = min([st.lineno] + [d.lineno for d in getattr(st, "decorator_list", [])])
        edits.append(((first, 0), 0, header.rstrip("; ") + "\n"))
        report["header_line"] = first
        report["lines_shifted"] = 1
    else:
        edits.append(((len(lines) + 1, 0), 0, "\n" + header.rstrip("; ") + "\n"))
        report["header_line"] = len(lines) + 1
    return edits, report


def apply(source, edits):
    lines = source.splitlines(keepends=True)
    lines.append("")
    # later positions first, so earlier ones stay valid; at one position, insertions made for
    # outer calls (earlier in the list) must end up first in the text
    order = sorted(range(len(edits)), key=lambda k: (edits[k][0], k), reverse=True)
    for k in order:
        (ln, col), n, txt = edits[k]
        while ln > len(lines):
            lines.append("")
        s = lines[ln - 1]
        lines[ln - 1] = s[:col] + txt + s[col + n:]
    return "".join(lines)


def patch(source, filename="<script>", library="torch", project_only=False):
    """(patched source, report). Raises BadInput."""
    edits, report = plan(source, filename, library, project_only)
    out = apply(source, edits)
    try:
        ast.parse(out, filename)
    except SyntaxError as e:  # a bug here, never the user's: say where
        raise RuntimeError("erg instrument produced invalid Python at %s:%s: %s"
                           % (filename, e.lineno, e.msg)) from None
    return out, report


def _write(path, text, src_path):
    if os.path.exists(path) and os.path.samefile(path, src_path):
        raise BadInput("%s: the output is the input script; choose another -o" % path)
    try:
        _out.write_whole(path, text, ".erg-instrument-")
    except _out.OutputError as e:
        raise BadInput("%s; not written" % e) from None


def _help_formatter():
    from ._cli import help_formatter
    return help_formatter()


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog="erg instrument", formatter_class=_help_formatter(),
        description="Wrap every call into LIBRARY in SCRIPT in an energy window (FECoM's "
                    "Patcher); running the patched script appends records to $ERG_CALLS "
                    "(default erg-calls.jsonl).")
    ap.add_argument("script")
    ap.add_argument("--library", default="torch", help="library whose calls are measured "
                    "(default torch)")
    ap.add_argument("-o", "--output", default="-", help="patched script (default - : stdout)")
    ap.add_argument("--project", action="store_true",
                    help="measure the whole script only (FECoM's project-level patch)")
    ap.add_argument("--report", metavar="FILE", help="write what was wrapped and skipped as "
                    "JSON")
    ap.add_argument("-q", "--quiet", action="store_true")
    a = ap.parse_args(argv)
    try:
        try:
            with open(a.script, encoding="utf-8") as f:
                src = f.read()
        except (OSError, UnicodeDecodeError) as e:
            raise BadInput("%s: %s" % (a.script, e.strerror if isinstance(e, OSError) else e))
        out, rep = patch(src, a.script, a.library, a.project)
        if a.output == "-":
            sys.stdout.write(out)
        else:
            _write(a.output, out, a.script)
        if a.report:
            _write(a.report, json.dumps(rep, indent=1) + "\n", a.script)
    except BadInput as e:
        sys.stderr.write("erg instrument: %s\n" % e)
        return 2
    if not a.quiet:
        sys.stderr.write("erg instrument: %s: %d calls wrapped, %d skipped%s\n"
                         % (a.script, len(rep["wrapped"]), len(rep["skipped"]),
                            "" if a.project else ""))
        for s in rep["skipped"]:
            sys.stderr.write("erg instrument: %s: skipped %s: %s\n"
                             % (s["site"], s.get("api", ""), s["reason"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
