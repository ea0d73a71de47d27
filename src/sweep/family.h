/* family.h: a model family's rule, which builds a model of any parameter
 * count in the shape of the family's largest published one (issue 38). */
#ifndef TRAINSIM_SWEEP_FAMILY_H
#define TRAINSIM_SWEEP_FAMILY_H

#include "config/spec.h"

/* The rule's reach: up to this many times the largest published size. */
#define FAMILY_RULE_REACH 10.0

/* Into *OUT, a copy of LARGEST (the family's largest published model, its
 * name borrowed, not copied) resized to about PARAMETERS (plan_model_params)
 * by the rule in family.c. FALSE, with *WHY (owned by the caller) saying
 * so, for a size the rule cannot build: below two layers at the narrowest
 * width, or beyond FAMILY_RULE_REACH times LARGEST. */
gboolean family_rule_build (const ModelSpec *largest, double parameters,
                            ModelSpec *out, char **why);

#endif
