#!/usr/bin/env python3
# tests/oracle/lr_reference.py — the learning rates (and OneCycleLR's momentum) PyTorch's schedulers give, for
# tests/oracle/optim_oracle_test.cpp to compare with gb::optim's. One JSON line per configuration:
#   {"name": ..., "lr": [[group lrs after construction], [after step 1], ...], "momentum": [[...], ...]}
# Needs PyTorch (Debian: apt-get install python3-torch). The configurations here and in the C++ test must match.
import json
import warnings

import torch
from torch.optim import SGD, Adam
from torch.optim.lr_scheduler import (CosineAnnealingLR, LinearLR, MultiStepLR, OneCycleLR, SequentialLR, StepLR)

warnings.simplefilter("ignore")  # SequentialLR uses the deprecated step(epoch) internally
STEPS = 25


def sgd(lrs, momentum=0.0):
    groups = [{"params": [torch.zeros(1, requires_grad=True)], "lr": lr} for lr in lrs]
    return SGD(groups, lr=lrs[0], momentum=momentum)


def adam(lrs):
    groups = [{"params": [torch.zeros(1, requires_grad=True)], "lr": lr} for lr in lrs]
    return Adam(groups, lr=lrs[0])


def momentum_of(opt):
    return [g["betas"][0] if "betas" in g else g["momentum"] for g in opt.param_groups]


def run(name, opt, make, steps=STEPS, momentum=False):
    sched = make(opt)
    lr = [[g["lr"] for g in opt.param_groups]]
    mom = [momentum_of(opt)] if momentum else []
    for _ in range(steps):
        opt.step()
        sched.step()
        lr.append([g["lr"] for g in opt.param_groups])
        if momentum:
            mom.append(momentum_of(opt))
    print(json.dumps({"name": name, "lr": lr, "momentum": mom}))


run("step", sgd([0.1, 0.03]), lambda o: StepLR(o, step_size=3, gamma=0.5))
run("multistep", sgd([0.1]), lambda o: MultiStepLR(o, milestones=[3, 7, 7, 12], gamma=0.3))
run("cosine", sgd([0.1, 0.02]), lambda o: CosineAnnealingLR(o, T_max=8, eta_min=0.001))
run("linear", sgd([0.1]), lambda o: LinearLR(o, start_factor=0.25, end_factor=1.0, total_iters=6))
run("linear_default", sgd([0.05]), lambda o: LinearLR(o))
run("onecycle_cos_sgd", sgd([0.1, 0.01], momentum=0.9),
    lambda o: OneCycleLR(o, max_lr=[0.1, 0.05], total_steps=25), momentum=True)
run("onecycle_linear_three_phase_adam", adam([0.001]),
    lambda o: OneCycleLR(o, max_lr=0.2, epochs=4, steps_per_epoch=6, pct_start=0.25, anneal_strategy="linear",
                         div_factor=10.0, final_div_factor=100.0, three_phase=True, base_momentum=0.8,
                         max_momentum=0.9), steps=24, momentum=True)
run("sequential_warmup_cosine", sgd([0.1]),
    lambda o: SequentialLR(o, [LinearLR(o, start_factor=0.1, end_factor=1.0, total_iters=5),
                               CosineAnnealingLR(o, T_max=15, eta_min=1e-4)], milestones=[5]))
run("sequential_three", sgd([0.1, 0.04]),
    lambda o: SequentialLR(o, [LinearLR(o, start_factor=0.5, total_iters=3), StepLR(o, step_size=4, gamma=0.5),
                               MultiStepLR(o, milestones=[2, 5], gamma=0.1)], milestones=[3, 10]))
