/* SPDX-License-Identifier: MIT */
/*
 * Provenance grades (core): how a figure was obtained, from a live hardware counter to a static
 * estimate. Shared by every module (the meter grades channels, the calculus composes grades), so
 * it lives below both (DESIGN's module table: core).
 */
#ifndef ERG_GRADE_H
#define ERG_GRADE_H

#include "erg/api.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Provenance grade of a figure (JouleClaw notes; DESIGN.md). Ordered from strongest to weakest, so
 * the grade of a composition is the maximum of its parts' grades.
 * - ERG_GRADE_HW_SHUNT: a hardware energy counter seen live for the domain it claims.
 * - ERG_GRADE_MODEL_BASED: vendor power readings integrated over time, or a vendor model.
 * - ERG_GRADE_ESTIMATOR: a static cost model, the labelled last resort.
 */
typedef enum erg_grade {
    ERG_GRADE_HW_SHUNT = 0,
    ERG_GRADE_MODEL_BASED = 1,
    ERG_GRADE_ESTIMATOR = 2
} erg_grade;

/** "hw_shunt", "model_based", "estimator". */
ERG_API const char *erg_grade_name(erg_grade grade);

/** Parse a grade name. Returns ERG_OK or ERG_EINVAL. */
ERG_API ERG_NODISCARD int erg_grade_parse(const char *name, erg_grade *out);

/** The weaker of two grades (composition rule: a figure is only as good as its weakest part). */
ERG_API erg_grade erg_grade_weakest(erg_grade a, erg_grade b);

#ifdef __cplusplus
}
#endif

#endif
