"""Aim a bouncing ball: gradient descent through a simulation with a loop and a branch.

Run:  python examples/projectile.py [--quick] [--out DIR]

A ball is thrown from the ground at ``speed`` m/s and ``angle`` radians, with
quadratic air drag. The simulation steps it forward in time (explicit Euler)
in a ``while`` loop; when a step takes it below the ground, a data-dependent
``if`` bounces it (``vy = -e * vy``, losing energy). The function returns
where the ball touches the ground the second time. srcgrad differentiates the
whole simulation (the generated code records the steps, then runs them
backwards through the branch each step took) and gradient descent on the
launch angle puts the second touchdown on a target. The iterations and the
final angle are printed and the trajectories drawn to DIR/projectile.png.
``--quick`` runs three iterations (the test suite's smoke run).

A note on the bounce: reflecting the velocity at the end of the step in which
the ball went through the ground, as the simplest code does, makes the
touchdown a sawtooth function of the angle: its jumps shrink with the time
step, but its slope between them is wrong (here even of the wrong sign), and
so is any derivative of it, by srcgrad or by finite differences. So the bounce
below happens at the moment of impact: the part of the step after the impact
(``late``) is undone, the velocity reflected, and that part flown again
upwards. Then the touchdown is smooth in the angle and its gradient is the
slope of the curve.
"""

from __future__ import annotations

import argparse
import pathlib
import time

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import srcgrad  # noqa: E402
from srcgrad.testing import check_grads  # noqa: E402

GRAVITY = 9.81  # m/s^2
DRAG = 0.02  # quadratic drag coefficient per unit mass, 1/m
RESTITUTION = 0.6  # e: the fraction of vertical speed a bounce keeps
DT = 0.005  # s


def second_touchdown(angle, speed):
    """Where (m from the launch point) the ball touches the ground the second time."""
    x = 0.0
    y = 0.0
    vx = speed * np.cos(angle)
    vy = speed * np.sin(angle)
    bounces = 0
    touchdown = 0.0
    while bounces < 2:
        v = np.sqrt(vx * vx + vy * vy)
        vx = vx - DT * DRAG * v * vx
        ay = -GRAVITY - DRAG * v * vy
        vy = vy + DT * ay
        x_before = x
        y_before = y
        x = x + DT * vx
        y = y + DT * vy
        if y < 0:  # it hit the ground a fraction `late` of this step ago: bounce then
            late = y / (y - y_before)
            touchdown = x - late * (x - x_before)
            vy = vy - late * DT * ay  # its velocity at the impact
            vy = -RESTITUTION * vy
            v = np.sqrt(vx * vx + vy * vy)
            vy = vy - late * DT * (GRAVITY + DRAG * v * vy)  # the rest of the step, upwards
            y = late * DT * vy
            bounces = bounces + 1
    return touchdown


def miss(angle, speed, target):
    """The squared distance from the second touchdown to the target."""
    return (second_touchdown(angle, speed) - target) ** 2


#: d miss / d angle, generated from the simulation's source
miss_grad = srcgrad.grad(miss, wrt="angle")


def trajectory(angle, speed):
    """The same simulation, recording positions, for the plot."""
    x = y = 0.0
    vx, vy = speed * np.cos(angle), speed * np.sin(angle)
    xs, ys, bounces = [0.0], [0.0], 0
    while bounces < 2:
        v = np.hypot(vx, vy)
        vx -= DT * DRAG * v * vx
        ay = -GRAVITY - DRAG * v * vy
        vy += DT * ay
        x_before, y_before = x, y
        x, y = x + DT * vx, y + DT * vy
        if y < 0:
            late = y / (y - y_before)
            xs.append(x - late * (x - x_before))
            ys.append(0.0)
            vy = -RESTITUTION * (vy - late * DT * ay)
            vy -= late * DT * (GRAVITY + DRAG * np.hypot(vx, vy) * vy)
            y = late * DT * vy
            bounces += 1
        xs.append(x)
        ys.append(y)
    return xs, ys


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="three iterations (smoke test)")
    parser.add_argument("--out", default=".", help="folder for the PNG (default: here)")
    parser.add_argument("--target", type=float, default=15.0, help="target distance, m")
    parser.add_argument("--speed", type=float, default=12.0, help="launch speed, m/s")
    parser.add_argument("--angle", type=float, default=0.3, help="initial angle, rad")
    args = parser.parse_args(argv)
    iterations = 3 if args.quick else 40
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    angle, speed, target = args.angle, args.speed, args.target
    learning_rate = 5e-4
    history = [angle]
    start = time.perf_counter()
    print(f"target: second touchdown at {target:.2f} m; launch speed {speed} m/s")
    # srcgrad's reverse and forward mode against central finite differences
    check_grads(second_touchdown, (angle, speed), wrt=(0, 1))
    print("check_grads: reverse mode, forward mode and finite differences agree")
    for it in range(iterations):
        d = second_touchdown(angle, speed)
        g = miss_grad(angle, speed, target)
        print(
            f"iteration {it:3d}  angle {angle:.5f} rad ({np.degrees(angle):6.2f} deg)  "
            f"touchdown {d:8.4f} m  miss {d - target:+.2e} m  d miss/d angle {g:+.3e}"
        )
        if abs(d - target) < 1e-4:
            break
        angle = angle - learning_rate * g
        history.append(angle)
    seconds = time.perf_counter() - start
    final = second_touchdown(angle, speed)
    print(
        f"final angle {angle:.5f} rad ({np.degrees(angle):.2f} deg): second touchdown at "
        f"{final:.4f} m (target {target} m), {seconds:.1f} s"
    )

    fig, ax = plt.subplots(figsize=(7, 3.5))
    shown = sorted({k for k in (0, 1, 2, 4) if k < len(history)} | {len(history) - 1})
    for k in shown:
        xs, ys = trajectory(history[k], speed)
        ax.plot(xs, ys, label=f"iteration {k}: {np.degrees(history[k]):.1f} deg", linewidth=1)
    ax.axvline(target, color="k", linestyle="--", linewidth=0.8, label="target")
    ax.set_xlabel("x (m)")
    ax.set_ylabel("height (m)")
    ax.set_title("Aiming the second touchdown by gradient descent on the angle")
    ax.legend(fontsize=7)
    fig.tight_layout()
    path = out / "projectile.png"
    fig.savefig(path, dpi=100)
    plt.close(fig)
    print(f"trajectories: {path}")
    if not args.quick:
        assert abs(final - target) < 1e-2, f"missed the target by {final - target:.3g} m"
    return {"angle": angle, "touchdown": final}


if __name__ == "__main__":
    main()
