// glassbox/optim/optim.h — everything in gb::optim (torch::optim): the optimizers, the learning-rate schedulers.
#pragma once

#include "glassbox/optim/adagrad.h"
#include "glassbox/optim/adam.h"
#include "glassbox/optim/adamw.h"
#include "glassbox/optim/lr_scheduler.h"
#include "glassbox/optim/one_cycle_lr.h"
#include "glassbox/optim/optimizer.h"
#include "glassbox/optim/rmsprop.h"
#include "glassbox/optim/schedulers.h"
#include "glassbox/optim/sequential_lr.h"
#include "glassbox/optim/sgd.h"
