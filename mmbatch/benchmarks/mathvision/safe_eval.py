"""Python's ``eval`` of an answer text, reproduced without running it: VLMEvalKit's MathVision rule calls ``eval()``
on the model's (lower-cased) answer and on the ground truth; mmbatch never runs a model's text.

The text is compiled by Python itself (so every ``SyntaxError`` is Python's own; compiling runs nothing), then the
tree is interpreted over a subset with Python's exact semantics: numbers, strings, tuples, lists and sets, the
arithmetic, bitwise, comparison and boolean operators (applied by Python's own operators to those values), ``x if
c else y``, and calls of the few builtins a math answer uses (:data:`CALLS`). Names resolve as ``eval`` inside
VLMEvalKit's ``is_equal`` resolves them: the function's bound locals (given by the caller), then the names of its
module, then the builtins. Every exception Python would raise is raised (the caller treats it as "not equal by this
route"), in Python's order of evaluation.

Two outcomes are not Python's:

- :class:`Refused`: the text reaches something Python could evaluate but this subset does not model (a call of
  ``print``, an attribute, a subscript, a comprehension...). The row must fail with the reason, never be guessed.
- :class:`WouldTimeOut`: an integer power too large for Python to finish within VLMEvalKit's 30 s limit on any
  machine (over :data:`TIMEOUT_BITS` bits); VLMEvalKit's timeout makes the whole comparison "not equal". Powers
  between :data:`COMPUTE_BITS` and :data:`TIMEOUT_BITS` bits finish on some machines and not others: refused.
"""

from __future__ import annotations

import ast
import builtins
import operator
from collections.abc import Callable, Mapping
from typing import Any

MODULE_NAMES = frozenset({
    "defaultdict", "pd", "timeout_decorator", "get_logger", "load", "can_infer", "latex2sympy", "logger",
    "FAIL_MSG", "is_equal", "get_gpt4_ICE", "build_mathv_gpt4_prompt", "list_to_dict", "post_check",
    "MATH_V_auxeval", "MATH_V_acc", "__name__", "__doc__", "__package__", "__loader__", "__spec__", "__file__",
    "__cached__", "__builtins__"})
"""The globals of VLMEvalKit's ``vlmeval/dataset/utils/mathv.py`` (e8e78f05): names its ``eval`` resolves."""
SITE_NAMES = frozenset({"copyright", "credits", "license", "exit", "quit", "help"})
"""Builtins the ``site`` module adds in a normal interpreter."""
CALLS: dict[str, Callable[..., Any]] = {name: getattr(builtins, name) for name in (
    "abs", "pow", "round", "min", "max", "sum", "int", "float", "complex", "divmod", "len")}
"""The builtins a text may call (positional arguments only)."""
COMPUTE_BITS = 2_000_000
"""Integer powers and shifts up to this many result bits are computed (well under a second)."""
TIMEOUT_BITS = 1_000_000_000
"""Integer powers over this many bits run for minutes even on a fast machine: VLMEvalKit times out."""
MAX_ITEMS = 10_000_000
"""Longest string, tuple or list a repetition may build."""

_BINARY: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow, ast.LShift: operator.lshift,
    ast.RShift: operator.rshift, ast.BitAnd: operator.and_, ast.BitOr: operator.or_, ast.BitXor: operator.xor,
    ast.MatMult: operator.matmul}
_UNARY: dict[type[ast.unaryop], Callable[[Any], Any]] = {
    ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Invert: operator.invert, ast.Not: operator.not_}
_COMPARE: dict[type[ast.cmpop], Callable[[Any, Any], Any]] = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt,
    ast.GtE: operator.ge, ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b}
_PLAIN = (bool, int, float, complex, str, tuple, list, set)


class Refused(Exception):
    """The text needs something the subset does not model; Python's ``eval`` might have succeeded."""


class WouldTimeOut(Exception):
    """Python would still be computing when VLMEvalKit's 30 s timeout fires."""


class Opaque:
    """A name that resolves to something other than a number (a builtin, a module, a function of ``mathv.py``).

    Python raises ``TypeError`` for arithmetic, unary operators and ordering on such objects and compares them by
    identity; anything else done with one (``|`` builds type unions, a call, an attribute) is refused.
    """

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"<{self.name}>"


def _resolves(name: str) -> bool:
    return name in MODULE_NAMES or name in SITE_NAMES or hasattr(builtins, name)


def _int_bits(value: Any) -> int | None:
    return abs(int(value)).bit_length() if isinstance(value, int) else None


def _guard_power(base: Any, exponent: Any) -> None:
    """Refuse or time out an integer power Python would spend too long on."""
    if not (isinstance(base, int) and isinstance(exponent, int)) or exponent <= 1 or abs(base) <= 1:
        return
    bits = exponent * max(1, abs(base).bit_length() - 1)
    if bits > TIMEOUT_BITS:
        raise WouldTimeOut(f"an integer power of about {bits:,} bits")
    if bits > COMPUTE_BITS:
        raise Refused(f"an integer power of about {bits:,} bits: Python may or may not finish it within "
                      "VLMEvalKit's 30 s timeout")


def _guard_binary(kind: type[ast.operator], left: Any, right: Any) -> None:
    if isinstance(left, Opaque) or isinstance(right, Opaque):
        other = right if isinstance(left, Opaque) else left
        if not isinstance(other, (*_PLAIN, Opaque)) and other is not None:
            raise Refused("an operator between a builtin or module name and a symbolic value")
        if kind is ast.BitOr:
            raise Refused("'|' with a builtin or module name (type unions are not modelled)")
        raise TypeError("unsupported operand type(s)")
    if kind is ast.Pow:
        _guard_power(left, right)
    elif kind is ast.LShift and isinstance(left, int) and isinstance(right, int) and right > 0 and left:
        if abs(left).bit_length() + right > COMPUTE_BITS:
            raise Refused(f"a shift to about {right:,} bits")
    elif kind is ast.Mult:
        sizes = [_int_bits(left), _int_bits(right)]
        if None not in sizes and sum(s or 0 for s in sizes) > 50 * COMPUTE_BITS:
            raise Refused("a product of integers of over 100 million bits")
        for sequence, times in ((left, right), (right, left)):
            if isinstance(sequence, str | tuple | list) and isinstance(times, int) and \
                    len(sequence) * times > MAX_ITEMS:
                raise Refused("a repetition of over 10 million items")
    elif kind is ast.Mod and isinstance(left, str):
        raise Refused("'%' formatting of a string")


def _call(function: Any, arguments: list[Any]) -> Any:
    if not isinstance(function, Opaque):
        if isinstance(function, _PLAIN) or function is None:
            raise TypeError(f"'{type(function).__name__}' object is not callable")
        raise Refused(f"a call of a {type(function).__name__} value")
    if function.name not in CALLS:
        raise Refused(f"a call of {function.name}()")
    if any(isinstance(argument, Opaque) for argument in arguments):
        raise Refused(f"{function.name}() of a builtin or module name")
    if function.name == "pow" and len(arguments) == 2:
        _guard_power(*arguments)
    return CALLS[function.name](*arguments)


class _Interpreter:
    def __init__(self, local_names: Mapping[str, Any]) -> None:
        self.local_names = local_names

    def value(self, node: ast.AST) -> Any:
        if isinstance(node, ast.Expression):
            return self.value(node.body)
        if isinstance(node, ast.Constant):
            if node.value is Ellipsis or isinstance(node.value, bytes):
                raise Refused(f"the constant {node.value!r}")
            return node.value
        if isinstance(node, ast.Name):
            return self.name(node.id)
        if isinstance(node, ast.BinOp):
            left, right = self.value(node.left), self.value(node.right)
            _guard_binary(type(node.op), left, right)
            return _BINARY[type(node.op)](left, right)
        if isinstance(node, ast.UnaryOp):
            operand = self.value(node.operand)
            if isinstance(operand, Opaque):
                if isinstance(node.op, ast.Not):
                    return False
                raise TypeError("bad operand type for unary operator")
            return _UNARY[type(node.op)](operand)
        if isinstance(node, ast.BoolOp):
            result = self.value(node.values[0])
            for later in node.values[1:]:
                truth = self.truth(result)
                if truth if isinstance(node.op, ast.Or) else not truth:
                    return result
                result = self.value(later)
            return result
        if isinstance(node, ast.Compare):
            return self.compare(node)
        if isinstance(node, ast.IfExp):
            return self.value(node.body) if self.truth(self.value(node.test)) else self.value(node.orelse)
        if isinstance(node, ast.Tuple | ast.List | ast.Set):
            if any(isinstance(element, ast.Starred) for element in node.elts):
                raise Refused("a starred element")
            items = [self.value(element) for element in node.elts]
            return tuple(items) if isinstance(node, ast.Tuple) else items if isinstance(node, ast.List) else set(items)
        if isinstance(node, ast.Call):
            function = self.value(node.func)
            arguments = [self.value(argument) for argument in node.args if not isinstance(argument, ast.Starred)]
            if node.keywords or len(arguments) != len(node.args):
                raise Refused("a call with keyword or starred arguments")
            return _call(function, arguments)
        if isinstance(node, ast.Attribute | ast.Subscript):
            self.value(node.value)  # a NameError there comes first, as in Python
            raise Refused("an attribute" if isinstance(node, ast.Attribute) else "a subscript")
        raise Refused(f"a {type(node).__name__} expression")

    def name(self, name: str) -> Any:
        if name in self.local_names:
            return self.local_names[name]
        if _resolves(name):
            return Opaque(name)
        raise NameError(f"name {name!r} is not defined")

    def truth(self, value: Any) -> bool:
        return True if isinstance(value, Opaque) else bool(value)

    def compare(self, node: ast.Compare) -> Any:
        left = self.value(node.left)
        result: Any = True
        for op, comparator in zip(node.ops, node.comparators, strict=True):
            right = self.value(comparator)
            if isinstance(op, ast.Is | ast.IsNot):
                raise Refused("an identity comparison ('is')")
            if isinstance(left, Opaque) or isinstance(right, Opaque):
                if not isinstance(op, ast.Eq | ast.NotEq):
                    if isinstance(op, ast.In | ast.NotIn):
                        raise Refused("'in' with a builtin or module name")
                    raise TypeError("'<' not supported")
                same = isinstance(left, Opaque) and isinstance(right, Opaque) and left.name == right.name
                result = same if isinstance(op, ast.Eq) else not same
            else:
                result = _COMPARE[type(op)](left, right)
            if not self.truth(result):
                return result
            left = right
        return result


def safe_eval(text: str, local_names: Mapping[str, Any]) -> Any:
    """What Python's ``eval(text)`` returns inside VLMEvalKit's ``is_equal`` whose bound locals are ``local_names``.

    Raises:
        Refused: the text needs something the subset does not model.
        WouldTimeOut: an integer power Python could not finish within 30 s.
        Exception: whatever Python's ``eval`` raises for this text (``SyntaxError``, ``NameError``, ``TypeError``...).
    """
    compile(text, "<string>", "eval", dont_inherit=True)  # Python's own syntax errors; nothing runs
    tree = ast.parse(text, mode="eval")
    return _Interpreter(local_names).value(tree)
