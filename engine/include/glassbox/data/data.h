// glassbox/data/data.h — everything in gb::data: datasets, samplers, collate, the DataLoader, readers, transforms.
#pragma once

#include "glassbox/data/batch_dataset.h"
#include "glassbox/data/batch_transform.h"
#include "glassbox/data/collate.h"
#include "glassbox/data/csv.h"
#include "glassbox/data/dataloader.h"
#include "glassbox/data/dataloader_options.h"
#include "glassbox/data/dataset.h"
#include "glassbox/data/example.h"
#include "glassbox/data/idx.h"
#include "glassbox/data/image_folder.h"
#include "glassbox/data/make_data_loader.h"
#include "glassbox/data/pin_memory.h"
#include "glassbox/data/sampler.h"
#include "glassbox/data/samplers.h"
#include "glassbox/data/synthetic.h"
#include "glassbox/data/transforms.h"
