/* What a policy does to results once the checks have run: severities moved, exceptions
 * allowed. Each amended result keeps its own words and says which policy line changed it,
 * so a report never hides that a verdict was the site's choice. */
#include "checks/check.h"
#include "policy/policy.h"

#include <string.h>

enum policy_severity policy_severity_of(const struct policy *p, const struct check_info *c, unsigned *line) {
        if (!p)
                return POLICY_SEVERITY_DEFAULT;
        const struct policy_override *by_category = NULL;
        for (size_t i = 0; i < p->n_overrides; i++) {
                const struct policy_override *o = &p->overrides[i];
                if (strcmp(o->check, c->id) == 0) {
                        if (line)
                                *line = o->line;
                        return o->severity;
                }
                if (strcmp(o->check, c->category) == 0)
                        by_category = o;
        }
        if (!by_category)
                return POLICY_SEVERITY_DEFAULT;
        if (line)
                *line = by_category->line;
        return by_category->severity;
}

void policy_apply(const struct policy *p, struct report *rep) {
        if (!p)
                return;
        for (size_t i = 0; i < rep->n_results; i++) {
                struct result *r = &rep->results[i];
                if (r->status != STATUS_WARN && r->status != STATUS_FAIL)
                        continue;
                const struct policy_exception *e = policy_exception_for(p, r->check->id, r->subject);
                /* width/gen exceptions are judged inside the pcie checks, which know the link. */
                if (e && !e->width && !e->gen) {
                        result_evidence(r, "policy", "%s:%u allows it: %s", p->path, e->line, e->reason);
                        result_status(r, STATUS_PASS, "allowed by site policy (%s): %s", e->reason, r->summary);
                        continue;
                }
                unsigned line = 0;
                enum policy_severity sev = policy_severity_of(p, r->check, &line);
                if (sev == POLICY_SEVERITY_FAIL && r->status == STATUS_WARN) {
                        result_evidence(r, "policy", "%s:%u makes %s's warnings failures", p->path, line, r->check->id);
                        result_status(r, STATUS_FAIL, "%s (a failure by site policy)", r->summary);
                } else if (sev == POLICY_SEVERITY_WARN && r->status == STATUS_FAIL) {
                        result_evidence(r, "policy", "%s:%u makes %s's failures warnings", p->path, line, r->check->id);
                        result_status(r, STATUS_WARN, "%s (a warning by site policy)", r->summary);
                }
        }
        report_tally(rep);
}
