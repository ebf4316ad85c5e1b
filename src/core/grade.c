/* SPDX-License-Identifier: MIT */
/* Provenance grades (erg/grade.h). */
#include "erg/grade.h"

#include "erg/error.h"

#include <string.h>

static const char *const grade_names[] = {"hw_shunt", "model_based", "estimator"};

const char *erg_grade_name(erg_grade grade)
{
    if ((unsigned)grade > ERG_GRADE_ESTIMATOR)
        return "unknown";
    return grade_names[grade];
}

int erg_grade_parse(const char *name, erg_grade *out)
{
    for (unsigned i = 0; i <= ERG_GRADE_ESTIMATOR; i++)
        if (name && strcmp(name, grade_names[i]) == 0) {
            *out = (erg_grade)i;
            return ERG_OK;
        }
    return ERG_EINVAL;
}

erg_grade erg_grade_weakest(erg_grade a, erg_grade b)
{
    return a > b ? a : b;
}
