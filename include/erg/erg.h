/* SPDX-License-Identifier: MIT */
/**
 * erg/erg.h - the umbrella header of liberg: includes every public header and nothing else.
 *
 * Modules: error and stats (core), meter and measure (counters, windows, calibration), signature
 * and calculus (energy signatures, the three operators, schedules), frontier (time-energy
 * trade-offs), trace (profiler traces), predict (HYMELL estimators), store (signature store).
 * Link with `pkg-config --libs erg`.
 */
#ifndef ERG_ERG_H
#define ERG_ERG_H

#include "erg/version.h"
#include "erg/error.h"
#include "erg/stats.h"
#include "erg/flags.h"
#include "erg/grade.h"
#include "erg/signature.h"
#include "erg/calculus.h"
#include "erg/meter.h"
#include "erg/measure.h"
#include "erg/frontier.h"
#include "erg/trace.h"
#include "erg/predict.h"
#include "erg/store.h"
#include "erg/serve.h"

#endif
