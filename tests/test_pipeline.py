"""Per-stage tests: the source after each stage, checked by parsing it and by running it.

``srcgrad.compiler.driver.stages(f, kind, wrt=[...], ranks={...})`` returns the
source after parse, normalize, analyze, transform, optimize and emit. Emitted
source is compared through ``ast`` or by substrings, never character by
character.
"""

import ast
import copy
import linecache
import re
import traceback

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import srcgrad
from srcgrad.compiler.driver import stages
from srcgrad.testing import check_grads

STAGES = ["parse", "normalize", "analyze", "transform", "optimize", "emit"]

# -- functions under test ------------------------------------------------------------------


def loss(w, x, y):
    p = 1 / (1 + np.exp(-(x @ w)))
    return -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))


def many_ops(x, y):
    z = np.sum(np.exp(-x * y) + np.sin(x) / (1.0 + y**2), axis=0)
    z += x[0] * 2.0
    z = z * z
    return np.mean(z * y.T)


def reassign_param(x):
    x = x * 2.0
    x = np.sin(x)
    x -= 1.0
    return np.sum(x * x)


def swap(a, b):
    a, b = b, a
    return np.sum(2.0 * a + 3.0 * b * b)


def unpack_tuple(x):
    p, q = x * 2.0, np.sin(x)
    return np.sum(p * q)


def nested_unpack(x):
    (a, b), c = (x, x * 2.0), x
    return np.sum(a * b * c)


def pack_then_index(x):
    t = (x, x * 3.0)
    return np.sum(t[1])


def returns_pair(x):
    return x * 2.0, x


def used_twice(x):
    y = np.sin(x)
    return np.sum(y * y + y)


def mismatched(w, x):
    return np.sum(np.tanh(x @ w))


def mismatched_linear(w, x):
    return np.sum(x @ w)  # its gradient needs the shape of x @ w, not its value


def collide(x, y):
    t1 = x * y
    x_bar = t1 + 1.0
    x_dot = np.sin(x_bar)
    np_1 = x_dot * y
    unbroadcast = np_1 + x
    out = unbroadcast * unbroadcast
    return np.sum(out)


def collide_params(t1, x_bar, unbroadcast, out):
    y_bar = t1 * x_bar + unbroadcast
    return np.sum(y_bar * out)


def collide_np(x, y, z):
    np = x * y
    np_1 = np + x
    return np_1 * y


# -- helpers -------------------------------------------------------------------------------


def function_def(source):
    """The single function definition in ``source`` (a function or a module)."""
    tree = ast.parse(source)
    funcs = [node for node in tree.body if isinstance(node, ast.FunctionDef)]
    return funcs[-1]


def loss_data(seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(3), rng.standard_normal((5, 3)), (rng.random(5) > 0.5) * 1.0


LOSS_RANKS = {"w": 1, "x": 2, "y": 1}
MANY_RANKS = {"x": 1, "y": 1}


def static_root(node, local):
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name) and node.id not in local


def operations(value, local):
    """How many operations (operators, calls, indexing, attributes of values) ``value`` holds."""
    count = 0
    callees = {id(n.func) for n in ast.walk(value) if isinstance(n, ast.Call)}
    for node in ast.walk(value):
        if isinstance(node, (ast.BinOp, ast.UnaryOp, ast.Compare, ast.BoolOp, ast.IfExp)):
            count += 1
        elif isinstance(node, (ast.Call, ast.Subscript)):
            count += 1
        elif isinstance(node, ast.Attribute) and id(node) not in callees:
            if not static_root(node, local):
                count += 1
    return count


def assigned_names(func):
    return [
        stmt.targets[0].id
        for stmt in func.body
        if isinstance(stmt, ast.Assign) and isinstance(stmt.targets[0], ast.Name)
    ]


def run_function_source(source, *args):
    namespace = {"np": np}
    exec(compile(source, "<stage>", "exec"), namespace)
    return namespace[function_def(source).name](*args)


# -- the driver ----------------------------------------------------------------------------


def test_stages_returns_every_stage_in_order():
    trace = stages(loss, "grad", wrt=["w"], ranks=LOSS_RANKS)
    assert list(trace) == STAGES
    assert all(isinstance(text, str) and text for text in trace.values())


def test_parse_stage_is_the_users_function():
    trace = stages(loss, "grad", wrt=["w"], ranks=LOSS_RANKS)
    parsed = function_def(trace["parse"])
    assert parsed.name == "loss"
    assert [a.arg for a in parsed.args.args] == ["w", "x", "y"]
    w, x, y = loss_data()
    assert run_function_source(trace["parse"], w, x, y) == pytest.approx(loss(w, x, y))


def test_emit_stage_is_the_derivatives_source():
    w, x, y = loss_data()
    d = srcgrad.grad(loss)
    d(w, x, y)
    wide = {n: tuple(k != 1 for k in np.shape(v)) for n, v in zip("wxy", (w, x, y))}
    trace = stages(loss, "grad", wrt=["w"], ranks=LOSS_RANKS, wide=wide)
    assert ast.dump(ast.parse(trace["emit"])) == ast.dump(ast.parse(d.source))


@pytest.mark.parametrize("kind", ["grad", "value_and_grad", "vjp", "jvp"])
def test_every_kind_runs_through_every_stage(kind):
    trace = stages(many_ops, kind, wrt=["x", "y"], ranks=MANY_RANKS)
    assert list(trace) == STAGES
    assert function_def(trace["emit"]).name == f"{kind}_many_ops"


# -- normalize -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "func, ranks",
    [
        (loss, LOSS_RANKS),
        (many_ops, MANY_RANKS),
        (reassign_param, {"x": 1}),
        (swap, {"a": 1, "b": 1}),
        (unpack_tuple, {"x": 1}),
    ],
)
def test_normalize_is_a_normal_form(func, ranks):
    trace = stages(func, "grad", wrt=list(ranks), ranks=ranks)
    core = function_def(trace["normalize"])
    params = [a.arg for a in core.args.args]
    local = set(params) | set(assigned_names(core))
    *body, ret = core.body
    assert isinstance(ret, ast.Return)
    assert isinstance(ret.value, (ast.Name, ast.Constant)), ast.unparse(ret)
    for stmt in body:
        assert isinstance(stmt, ast.Assign), ast.unparse(stmt)
        assert len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
        assert operations(stmt.value, local) <= 1, ast.unparse(stmt)
    targets = assigned_names(core)
    assert len(targets) == len(set(targets)), "a name is assigned twice"
    assert not set(targets) & set(params), "a parameter is assigned"


def test_normalize_has_one_statement_per_operation():
    trace = stages(loss, "grad", wrt=["w"], ranks=LOSS_RANKS)
    core = function_def(trace["normalize"])
    # @, unary -, exp, +, / ; log, *, -, -, log, *, +, mean, unary -
    assert len(core.body) - 1 == 14


def test_normalize_spells_out_augmented_assignment_and_versions_names():
    trace = stages(many_ops, "grad", wrt=["x"], ranks=MANY_RANKS)
    core = function_def(trace["normalize"])
    assert not any(isinstance(node, ast.AugAssign) for node in ast.walk(core))
    targets = assigned_names(core)
    versions = [t for t in targets if re.fullmatch(r"z(_\d+)?", t)]
    assert len(versions) == 3 and versions[0] == "z"
    augmented = core.body[targets.index(versions[1])].value
    assert isinstance(augmented, ast.BinOp) and isinstance(augmented.op, ast.Add)
    assert isinstance(augmented.left, ast.Name) and augmented.left.id == "z"
    squared = core.body[targets.index(versions[2])].value
    assert isinstance(squared, ast.BinOp) and isinstance(squared.op, ast.Mult)
    assert squared.left.id == versions[1] and squared.right.id == versions[1]


def test_normalize_versions_a_reassigned_parameter():
    trace = stages(reassign_param, "grad", wrt=["x"], ranks={"x": 1})
    core = function_def(trace["normalize"])
    targets = assigned_names(core)
    assert "x" not in targets
    assert len([t for t in targets if re.fullmatch(r"x_\d+", t)]) == 3
    x = np.array([0.1, 0.5, -2.0])
    assert run_function_source(trace["normalize"], x) == pytest.approx(reassign_param(x))
    check_grads(reassign_param, (x,))


@pytest.mark.parametrize(
    "func, args",
    [
        (loss, loss_data()),
        (many_ops, (np.array([0.2, 0.4, -0.3]), np.array([1.0, -0.5, 2.0]))),
        (swap, (np.array([1.0, 2.0]), np.array([-1.0, 0.5]))),
        (unpack_tuple, (np.array([1.0, 2.0]),)),
    ],
)
def test_normalized_function_computes_the_same_value(func, args):
    trace = stages(func, "grad", wrt=[func.__code__.co_varnames[0]])
    assert run_function_source(trace["normalize"], *args) == pytest.approx(func(*args))


def test_tuple_swap_differentiates_correctly():
    a, b = np.array([1.0, 2.0, -0.5]), np.array([0.3, -1.0, 4.0])
    # after the swap the value is 2 * b + 3 * a * a (in the arguments' names)
    for mode in ("reverse", "forward"):
        ga, gb = srcgrad.grad(swap, wrt=(0, 1), mode=mode)(a, b)
        np.testing.assert_allclose(ga, 6 * a)
        np.testing.assert_allclose(gb, np.full(3, 2.0))
    check_grads(swap, (a, b), wrt=(0, 1))
    core = function_def(stages(swap, "grad", wrt=["a"])["normalize"])
    assert not any(isinstance(t, ast.Tuple) for s in core.body for t in getattr(s, "targets", []))


def test_tuple_unpacking_of_expressions():
    x = np.array([0.5, 1.0, 2.0])
    np.testing.assert_allclose(
        srcgrad.grad(unpack_tuple)(x), 2 * np.sin(x) + 2 * x * np.cos(x), rtol=1e-12
    )
    check_grads(unpack_tuple, (x,))


def correct_or_refused(compute, expected):
    """``compute()`` equals ``expected``, or srcgrad refuses it with UnsupportedSyntaxError."""
    try:
        got = compute()
    except srcgrad.UnsupportedSyntaxError:
        return
    np.testing.assert_allclose(np.asarray(got, dtype=float), expected, rtol=1e-12)


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_nested_tuple_unpacking(mode):
    x = np.array([1.0, 2.0])
    correct_or_refused(lambda: srcgrad.grad(nested_unpack, mode=mode)(x), 6 * x**2)


def test_indexing_a_tuple_of_active_values():
    x = np.array([1.0, 2.0])
    correct_or_refused(lambda: srcgrad.grad(pack_then_index)(x), np.full(2, 3.0))


def test_returning_a_tuple_of_active_values():
    correct_or_refused(lambda: srcgrad.jvp(returns_pair)(1.5, 1.0)[1], [2.0, 1.0])
    correct_or_refused(lambda: srcgrad.vjp(returns_pair)(1.5, (1.0, 1.0)), 3.0)


# -- optimize ------------------------------------------------------------------------------


STRAIGHT_LINE = [
    (loss, ["w"], LOSS_RANKS),
    (loss, ["w", "x"], LOSS_RANKS),
    (many_ops, ["x", "y"], MANY_RANKS),
    (used_twice, ["x"], {"x": 1}),
    (reassign_param, ["x"], {"x": 1}),
    (swap, ["a", "b"], {"a": 1, "b": 1}),
]


@pytest.mark.parametrize("kind", ["grad", "value_and_grad", "vjp"])
@pytest.mark.parametrize("func, wrt, ranks", STRAIGHT_LINE)
def test_optimize_leaves_no_zeros_like_in_straight_line_code(func, wrt, ranks, kind):
    trace = stages(func, kind, wrt=wrt, ranks=ranks)
    assert "zeros_like" not in trace["optimize"]
    assert "zeros_like" not in function_def(trace["emit"]).name
    assert "zeros_like" not in ast.unparse(function_def(trace["emit"]))


def reads(stmt):
    node = stmt.value if isinstance(stmt, ast.Assign) else stmt
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


@pytest.mark.parametrize("kind", ["grad", "value_and_grad", "vjp", "jvp"])
@pytest.mark.parametrize("func, wrt, ranks", STRAIGHT_LINE)
def test_optimize_leaves_no_dead_statements(func, wrt, ranks, kind):
    trace = stages(func, kind, wrt=wrt, ranks=ranks)
    body = function_def(trace["optimize"]).body
    for i, stmt in enumerate(body):
        if isinstance(stmt, ast.Assign):
            assert is_read_before_overwritten(stmt.targets[0].id, body[i + 1 :]), (
                f"{ast.unparse(stmt)} is never read"
            )


def is_read_before_overwritten(name, rest):
    for stmt in rest:
        if name in reads(stmt):
            return True
        if isinstance(stmt, ast.Assign) and stmt.targets[0].id == name:
            return False
    return False


def test_dead_statement_check_finds_dead_statements():
    body = ast.parse("a = 1\nb = a\nb = 2\nc = b\nd = c\nreturn c", mode="exec").body
    live = [
        is_read_before_overwritten(s.targets[0].id, body[i + 1 :]) for i, s in enumerate(body[:-1])
    ]
    assert live == [True, False, True, True, False]


@pytest.mark.parametrize("kind", ["grad", "value_and_grad", "vjp"])
@pytest.mark.parametrize("func, wrt, ranks", STRAIGHT_LINE)
def test_first_accumulation_is_a_plain_assignment(func, wrt, ranks, kind):
    trace = stages(func, kind, wrt=wrt, ranks=ranks)
    body = function_def(trace["optimize"]).body
    seen = set()
    for stmt in body:
        if not isinstance(stmt, ast.Assign):
            continue
        name = stmt.targets[0].id
        if name.endswith("_bar") and name not in seen:
            assert name not in reads(stmt), ast.unparse(stmt)
            value = stmt.value
            assert not (
                isinstance(value, ast.Call)
                and isinstance(value.func, ast.Attribute)
                and value.func.attr == "zeros_like"
            ), ast.unparse(stmt)
        seen.add(name)


def test_optimized_code_computes_the_gradient():
    w, x, y = loss_data(seed=4)
    trace = stages(loss, "grad", wrt=["w"], ranks=LOSS_RANKS)
    namespace = {}
    exec(compile(trace["emit"], "<emitted>", "exec"), namespace)
    p = 1 / (1 + np.exp(-(x @ w)))
    np.testing.assert_allclose(namespace["grad_loss"](w, x, y), x.T @ (p - y) / len(y))


# -- the reverse-mode source of the logistic-regression loss -------------------------------


def loss_source():
    d = srcgrad.grad(loss)
    d(*loss_data())
    return d.source


def test_reverse_source_comments_name_the_users_lines():
    source = loss_source()
    comments = [line.strip() for line in source.splitlines() if "# grad of:" in line]
    assert comments == [
        "# grad of: return -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))",
        "# grad of: p = 1 / (1 + np.exp(-(x @ w)))",
    ]


def test_reverse_source_has_no_unbroadcast_for_scalar_operations():
    source = loss_source()
    function = source[source.index("def grad_loss") :]
    block = function[function.index("# grad of: p = 1 / (1 + np.exp(-(x @ w)))") :]
    assert "unbroadcast" not in block
    assert "zeros_like" not in function
    assert "x_bar" not in function and "y_bar" not in function  # inactive: no adjoints


def test_reverse_source_is_straight_line():
    tree = function_def(loss_source())
    for node in ast.walk(tree):
        assert not isinstance(node, (ast.For, ast.While, ast.If, ast.Try)), ast.dump(node)
    assert "append" not in ast.unparse(tree) and "pop" not in ast.unparse(tree)


# -- emit: linecache -----------------------------------------------------------------------


def mean_of_a_product(x):
    x = np.tanh(x)
    return np.mean(x @ x)


def test_a_mean_seed_reads_its_shape_off_a_product():
    # np.mean's seed needs x @ x's shape and size only (found by the thorough random programs)
    x = np.array([[0.55, -0.2], [0.1, 0.3]])
    d = srcgrad.grad(mean_of_a_product)
    check_grads(mean_of_a_product, (x,))
    d(x)
    assert "matmul_shape(" in d.source


def test_shapes_computed_instead_of_values_still_check_them():
    with pytest.raises(ValueError, match="do not match"):
        srcgrad.grad(mismatched_linear)(np.ones(3), np.ones((2, 4)))


def test_generated_lines_are_in_linecache_for_tracebacks():
    d = srcgrad.grad(mismatched)
    with pytest.raises(ValueError) as info:
        d(np.ones(3), np.ones((2, 4)))
    frames = [f for f in traceback.extract_tb(info.tb) if f.filename.startswith("<srcgrad")]
    assert frames, "no frame in generated code"
    frame = frames[-1]
    text = linecache.getline(frame.filename, frame.lineno)
    assert "x @ w" in text
    assert frame.line == text.strip()
    assert d.source.splitlines()[frame.lineno - 1] == text.rstrip("\n")


def test_each_generated_module_has_its_own_file_name():
    d1, d2 = srcgrad.jvp(mismatched), srcgrad.vjp(mismatched)
    names = set()
    for d, extra in ((d1, np.ones(3)), (d2, 1.0)):
        with pytest.raises(ValueError) as info:
            d(np.ones(3), np.ones((2, 4)), extra)
        frames = [f for f in traceback.extract_tb(info.tb) if f.filename.startswith("<srcgrad")]
        assert frames and "x @ w" in frames[-1].line
        names.add(frames[-1].filename)
    assert len(names) == 2


# -- generated names never collide with the user's -----------------------------------------


def test_user_names_like_generated_names():
    x = np.array([[0.5, -1.0, 2.0], [0.1, 0.2, 0.3]])
    y = np.array([1.5, -0.5, 0.25])  # broadcast against x: unbroadcast is needed
    check_grads(collide, (x, y), wrt=(0, 1))
    gx, gy = srcgrad.grad(collide, wrt=(0, 1))(x, y)
    t1 = x * y
    u = np.sin(t1 + 1.0) * y + x
    du = 2 * u
    dt1 = du * y * np.cos(t1 + 1.0)
    np.testing.assert_allclose(gx, du + dt1 * y, rtol=1e-10)
    np.testing.assert_allclose(gy, np.sum(du * np.sin(t1 + 1.0) + dt1 * x, axis=0), rtol=1e-10)


def test_parameters_named_like_generated_names():
    args = (np.array([1.0, 2.0]), np.array([3.0, -1.0]), np.array([0.5, 0.5]), np.ones(2))
    check_grads(collide_params, args, wrt=(0, 1, 2, 3))
    g = srcgrad.grad(collide_params, wrt=(0, 2))(*args)
    np.testing.assert_allclose(g[0], args[1] * args[3])
    np.testing.assert_allclose(g[1], args[3])


def test_local_named_np_does_not_hide_the_array_module():
    gx, gy, gz = srcgrad.grad(collide_np, wrt=(0, 1, 2))(2.0, 3.0, 4.0)
    assert (gx, gy, gz) == pytest.approx((12.0, 14.0, 0.0))
    z = np.ones((2, 2))
    gz = srcgrad.grad(collide_np, wrt=2)(2.0, 3.0, z)
    assert gz.shape == (2, 2) and not np.any(gz)
    value, tangent = srcgrad.jvp(collide_np, wrt=(0, 1))(2.0, 3.0, 4.0, 1.0, 0.0)
    assert value == pytest.approx(24.0) and tangent == pytest.approx(12.0)


def damped(k, x, v, dt, n):
    for _ in range(n):
        a = -k * x - 0.1 * v
        x = x + dt * v
        v = v + dt * a
    return x * x


@pytest.mark.parametrize("n", [0, 1, 5])
def test_loop_invariant_scalar_arithmetic_is_computed_before_the_loop(n):
    check_grads(damped, (2.0, 1.0, 0.5, 0.1, n), wrt=(0, 1, 2))
    d = srcgrad.grad(damped)
    d(2.0, 1.0, 0.5, 0.1, n)
    function = function_def(d.source)
    loop = next(s for s in function.body if isinstance(s, ast.For))
    before = ast.unparse(function.body[: function.body.index(loop)])
    assert "= -k" in before and "-k" not in ast.unparse(loop)


# -- optimize: values the code already has are read, not computed again --------------------------


def rotation(theta, r):
    c = np.cos(theta)
    s = np.sin(theta)
    return np.sum(r * c * c + r * s)


def rotation_after_reassignment(theta, r):
    c = np.cos(theta)
    theta = theta * 2.0
    return np.sum(r * c + np.sin(theta))


def rotation_with_a_write(theta, r):
    c = np.cos(theta)
    y = r * 1.0
    y[0] = 0.0
    return np.sum(y * c + np.sin(theta))


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_a_derivative_reads_the_users_cos_and_sin_instead_of_computing_them(mode):
    theta, r = np.array([0.3, -1.2, 2.0]), np.array([1.5, 0.5, -2.0])
    check_grads(rotation, (theta, r), wrt=(0, 1))
    d = srcgrad.grad(rotation, mode=mode)
    np.testing.assert_allclose(
        d(theta, r), r * (-2 * np.cos(theta) * np.sin(theta) + np.cos(theta))
    )
    if mode == "reverse":  # (forward mode needs cos(theta) before the user computes it)
        function = ast.unparse(function_def(d.source))
        assert function.count("np.cos(theta)") == 1 and function.count("np.sin(theta)") == 1


@pytest.mark.parametrize(
    "func", [rotation_after_reassignment, rotation_with_a_write], ids=lambda f: f.__name__
)
def test_a_value_that_may_have_changed_is_computed_again(func):
    theta, r = np.array([0.3, -1.2, 2.0]), np.array([1.5, 0.5, -2.0])
    check_grads(func, (theta, r), wrt=(0, 1))


# -- optimize: chains of products, negated starts -------------------------------------------------

CHAIN_FACTORS = st.sampled_from(["a", "b", "c", "2", "0.5", "4.0", "3.0", "0.1", "(2 * c)", "-1"])


@st.composite
def product_chains(draw):
    """Source of a chain like ``-a / (2 * c) * b * 2``: names, constants (powers of two
    and others), negated factors, products and quotients."""
    text = draw(CHAIN_FACTORS)
    for _ in range(draw(st.integers(1, 5))):
        factor = draw(CHAIN_FACTORS)
        if draw(st.booleans()):
            factor = f"-{factor}"
        text = f"{text} {draw(st.sampled_from(['*', '/']))} {factor}"
    return f"-{text}" if draw(st.booleans()) else text


def chain_operations(tree):
    return sum(isinstance(n, (ast.BinOp, ast.UnaryOp)) for n in ast.walk(tree))


@given(chain=product_chains(), seed=st.integers(0, 2**16))
def test_simplified_product_chains_compute_the_same_numbers_exactly(chain, seed):
    # merging powers of two and moving signs rounds nothing: the same bits, never more work
    from srcgrad.compiler.optimize import Context, simplify

    body = ast.parse(f"r = {chain}").body
    simplified, _ = simplify(copy.deepcopy(body), Context())
    ast.fix_missing_locations(simplified[0])
    values = dict(zip("abc", np.random.default_rng(seed).uniform(0.5, 2.0, (3, 4))))
    want = eval(compile(ast.Expression(body[0].value), "<chain>", "eval"), values)
    got = eval(compile(ast.Expression(simplified[0].value), "<chain>", "eval"), values)
    np.testing.assert_array_equal(got, want)
    assert chain_operations(simplified[0]) <= chain_operations(body[0]), ast.unparse(simplified[0])


def root_of_squares(x, y):
    return np.sum(np.sqrt(1.0 + x * x) * y)


def test_sqrt_of_a_square_has_no_factors_of_two_in_its_gradient():
    x, y = np.array([0.3, -1.2, 2.0]), np.array([1.5, 0.5, -2.0])
    check_grads(root_of_squares, (x, y))
    d = srcgrad.grad(root_of_squares)
    d(x, y)
    function = ast.unparse(function_def(d.source))
    assert "2 *" not in function and "* 2" not in function, function


def negated_then_added(x, y):
    a = np.sin(x) - x * y  # the adjoint of x starts as -y * a_bar, then gets cos(x) * a_bar
    return np.sum(a * a)


def test_a_negated_first_term_becomes_a_subtraction():
    x, y = np.array([0.3, -1.2, 2.0]), np.array([1.5, 0.5, -2.0])
    check_grads(negated_then_added, (x, y), wrt=(0, 1))
    d = srcgrad.grad(negated_then_added)
    d(x, y)
    function = function_def(d.source)
    x_bar = [ast.unparse(s) for s in function.body if "x_bar =" in ast.unparse(s)]
    assert len(x_bar) == 1 and " - " in x_bar[0], x_bar


def test_a_negated_start_is_not_moved_past_a_write_into_what_it_reads():
    from srcgrad.compiler.optimize import Context, subtract_negated_start

    tree = ast.parse("v = -y\ny[0] = 5.0\nv = v + b\nw = -b\nw = w + y")
    body, changed = subtract_negated_start(tree.body, Context())
    assert changed
    assert [ast.unparse(s) for s in body] == ["v = -y", "y[0] = 5.0", "v = v + b", "w = y - b"]
