//! Data-subject consent in the store (SPEC §6.3): an item's subjects, the consent state a grant
//! carries (who must consent, the recorded history, whether it is effective), the consent and
//! withdrawal writes, their durable records and their views. The rule itself (whose consent is
//! needed, when a grant is effective, what a pending grant does to admission) is
//! `earshot_core::consent` and `earshot_core::admission`.
//!
//! Subjects and consents are kept by participant **name**, not interned id: a subject removed
//! from the store (§1.8) stays named on its items and in the grants that need its consent. Such
//! a grant keeps the consent state it had: when the removed subject had not consented (or had
//! withdrawn), the grant stays pending for good, since nobody can consent in its name (fail
//! closed); a consent it gave before its removal stands, as any recorded decision does.

use std::sync::Arc;

use earshot_core::consent::{derived_subjects, is_effective, missing, required, MAX_SUBJECTS};
use serde::{Deserialize, Serialize};

use crate::error::{check_id, Result, StoreError};
use crate::memory::apply::{outcome, Apply};
use crate::memory::model::{format_time, ConsentAction, ConsentEventView, ConsentView, Outcome};
use crate::memory::snapshot::{Gid, ItemRec, MemorySnapshot};

/// At most this many consent decisions are recorded per grant; beyond it a new consent is
/// refused (`limit_exceeded`), a withdrawal never is (so a subject can always withdraw).
pub const MAX_CONSENT_EVENTS: usize = 256;

/// One recorded decision of a subject about one grant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ConsentEvent {
    pub subject: Arc<str>,
    /// `true`: consented; `false`: withdrew.
    pub given: bool,
    pub at_ms: i64,
    pub revision: u64,
}

/// The consent a grant needs and has. Built only by [`GrantConsent::new`], which derives who
/// consents now and whether the grant is effective from the recorded history, so the three can
/// never disagree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct GrantConsent {
    /// Subjects of the grant's item other than its owner, sorted.
    pub required: Box<[Arc<str>]>,
    /// Every decision, in order.
    pub events: Box<[ConsentEvent]>,
    /// Subjects whose last decision is a consent, sorted.
    pub consenting: Box<[Arc<str>]>,
    /// Every required subject consents now.
    pub effective: bool,
}

impl GrantConsent {
    pub fn new(required: Box<[Arc<str>]>, events: Box<[ConsentEvent]>) -> Self {
        let mut consenting: Vec<Arc<str>> = Vec::new();
        for e in events.iter() {
            match (consenting.binary_search(&e.subject), e.given) {
                (Err(at), true) => consenting.insert(at, e.subject.clone()),
                (Ok(at), false) => {
                    consenting.remove(at);
                }
                _ => {}
            }
        }
        let effective = is_effective(&required, &consenting);
        GrantConsent { required, events, consenting: consenting.into(), effective }
    }

    /// Subjects whose last decision is a withdrawal (and who have not consented since).
    fn withdrawn(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for r in self.required.iter() {
            let last = self.events.iter().rev().find(|e| e.subject == *r);
            if last.is_some_and(|e| !e.given) {
                out.push(r.to_string());
            }
        }
        out
    }

    /// The consent state as clients see it; `history` adds every recorded decision.
    pub fn view(&self, history: bool) -> ConsentView {
        ConsentView {
            required: self.required.iter().map(|s| s.to_string()).collect(),
            consented: self.consenting.iter().map(|s| s.to_string()).collect(),
            missing: missing(&self.required, &self.consenting).map(|s| s.to_string()).collect(),
            withdrawn: self.withdrawn(),
            effective: self.effective,
            history: if history {
                self.events
                    .iter()
                    .map(|e| ConsentEventView {
                        subject: e.subject.to_string(),
                        action: if e.given { ConsentAction::Consented } else { ConsentAction::Withdrawn },
                        at: format_time(e.at_ms),
                        revision: e.revision,
                    })
                    .collect()
            } else {
                Vec::new()
            },
        }
    }

    /// The durable form.
    pub fn record(&self) -> ConsentRecord {
        ConsentRecord {
            required: self.required.iter().map(|s| s.to_string()).collect(),
            events: self
                .events
                .iter()
                .map(|e| ConsentEventRecord {
                    subject: e.subject.to_string(),
                    action: if e.given { ConsentAction::Consented } else { ConsentAction::Withdrawn },
                    at_ms: e.at_ms,
                    revision: e.revision,
                })
                .collect(),
        }
    }

    /// From the durable form, checked against the subjects of the grant's item: a required
    /// subject the item does not name, or a decision by someone not required, refuses the
    /// start (the records do not add up).
    pub fn from_record(r: &ConsentRecord, item: &ItemRec) -> std::result::Result<Self, String> {
        let subjects = item.subjects();
        let mut req: Vec<Arc<str>> = Vec::with_capacity(r.required.len());
        for s in &r.required {
            let Ok(at) = subjects.binary_search_by(|x| (**x).cmp(s.as_str())) else {
                return Err(format!("requires consent of `{s}`, not a subject of item `{}`", item.name));
            };
            req.push(subjects.get(at).cloned().unwrap_or_else(|| Arc::from(s.as_str())));
        }
        if req.windows(2).any(|w| w.first() >= w.get(1)) || req.is_empty() {
            return Err("has a required subject list that is empty, unsorted or repeats".into());
        }
        let mut events = Vec::with_capacity(r.events.len());
        for e in &r.events {
            let Ok(at) = req.binary_search_by(|x| (**x).cmp(e.subject.as_str())) else {
                return Err(format!("records a decision of `{}`, whose consent it does not need", e.subject));
            };
            let subject = req.get(at).cloned().unwrap_or_else(|| Arc::from(e.subject.as_str()));
            events.push(ConsentEvent {
                subject,
                given: e.action == ConsentAction::Consented,
                at_ms: e.at_ms,
                revision: e.revision,
            });
        }
        Ok(GrantConsent::new(req.into(), events.into()))
    }
}

/// The durable consent state of a grant (inside its `g/` record).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConsentRecord {
    pub required: Vec<String>,
    #[serde(default)]
    pub events: Vec<ConsentEventRecord>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConsentEventRecord {
    pub subject: String,
    pub action: ConsentAction,
    pub at_ms: i64,
    pub revision: u64,
}

/// The consent a new grant on `item` needs: `None` when the item has no subject other than its
/// owner (the grant is effective at once, as before SPEC §6.3).
pub(crate) fn for_new_grant(snap: &MemorySnapshot, item: &ItemRec) -> Option<Arc<GrantConsent>> {
    if item.subjects().is_empty() {
        return None;
    }
    let owner = snap.part_name(item.owner);
    let req = required(item.subjects(), &owner);
    (!req.is_empty()).then(|| Arc::new(GrantConsent::new(req.into(), Box::default())))
}

impl Apply<'_> {
    /// The subjects a write names for a new item: each a known participant, at most
    /// [`MAX_SUBJECTS`], sorted and deduplicated, together with those `inherited` from sources.
    pub(crate) fn subjects_for(&self, named: &[String], inherited: &[&[Arc<str>]]) -> Result<Box<[Arc<str>]>> {
        if named.len() > MAX_SUBJECTS {
            return Err(StoreError::LimitExceeded { field: "subjects", limit: MAX_SUBJECTS });
        }
        let mut own: Vec<Arc<str>> = Vec::with_capacity(named.len());
        for s in named {
            check_id("subjects", s)?;
            let pid = self.snap.pid(s).ok_or_else(|| StoreError::SubjectNotFound(s.clone()))?;
            own.push(self.snap.part_name(pid));
        }
        let all = derived_subjects(inherited.iter().copied(), &own);
        if all.len() > MAX_SUBJECTS {
            return Err(StoreError::LimitExceeded { field: "subjects", limit: MAX_SUBJECTS });
        }
        Ok(all.into())
    }

    /// `POST /grants/{grant}/consents` (`given`) and `DELETE /grants/{grant}/consents/{subject}`:
    /// records one subject's decision about one grant. Only a subject whose consent the grant
    /// needs may decide (`not_a_subject`); a revoked grant takes no decision. Repeating the
    /// decision in force writes nothing and answers as the first did.
    pub(crate) fn decide_consent(&mut self, grant: &str, subject: &str, given: bool) -> Result<Outcome> {
        check_id("grant", grant)?;
        check_id("subject", subject)?;
        let gid: Gid = *self.snap.gids.get(grant).ok_or_else(|| StoreError::GrantNotFound(grant.to_string()))?;
        let mut g = self.snap.grant(gid).cloned().ok_or_else(|| StoreError::GrantNotFound(grant.to_string()))?;
        let not_a_subject = || StoreError::NotASubject { grant: grant.to_string(), subject: subject.to_string() };
        // A participant who is not (or no longer) in the store cannot decide anything.
        if self.snap.pid(subject).is_none() {
            return Err(not_a_subject());
        }
        let Some(c) = g.consent.as_deref() else { return Err(not_a_subject()) };
        let Ok(at) = c.required.binary_search_by(|x| (**x).cmp(subject)) else { return Err(not_a_subject()) };
        if g.revoked {
            return Err(StoreError::GrantAlreadyRevoked(grant.to_string()));
        }
        let name = c.required.get(at).cloned().unwrap_or_else(|| Arc::from(subject));
        let kind = if given { "consented" } else { "withdrawn" };
        let pending_reason = |c: &GrantConsent| (!c.effective).then(|| "consent_pending".to_string());
        let in_force = c.consenting.binary_search(&name).is_ok();
        if in_force == given {
            // The decision already in force: a retry, nothing to record.
            return Ok(Outcome { reason: pending_reason(c), ..outcome(kind, vec![grant.to_string()]) });
        }
        if given && c.events.len() >= MAX_CONSENT_EVENTS {
            return Err(StoreError::LimitExceeded { field: "consents", limit: MAX_CONSENT_EVENTS });
        }
        let mut events = c.events.to_vec();
        events.push(ConsentEvent { subject: name, given, at_ms: self.now_ms, revision: self.snap.revision + 1 });
        let next = GrantConsent::new(c.required.clone(), events.into());
        let reason = pending_reason(&next);
        g.consent = Some(Arc::new(next));
        self.snap.grants.set(gid as usize, g);
        self.dirty.grants.push(gid);
        Ok(Outcome { reason, ..outcome(kind, vec![grant.to_string()]) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(s: &str, given: bool) -> ConsentEvent {
        ConsentEvent { subject: Arc::from(s), given, at_ms: 0, revision: 1 }
    }

    #[test]
    fn the_history_decides_who_consents_now() {
        let req: Box<[Arc<str>]> = vec![Arc::from("bob"), Arc::from("carol")].into();
        let c = GrantConsent::new(req.clone(), Box::default());
        assert!(!c.effective);
        let c = GrantConsent::new(req.clone(), vec![ev("bob", true), ev("carol", true)].into());
        assert!(c.effective);
        let c = GrantConsent::new(req.clone(), vec![ev("bob", true), ev("carol", true), ev("bob", false)].into());
        assert!(!c.effective);
        let v = c.view(true);
        assert_eq!(
            (v.consented, v.missing.clone(), v.withdrawn),
            (vec!["carol".to_string()], vec!["bob".to_string()], vec!["bob".to_string()])
        );
        assert_eq!(v.history.len(), 3);
        let c = GrantConsent::new(req, vec![ev("bob", false), ev("bob", true), ev("carol", true)].into());
        assert!(c.effective);
        assert!(c.view(false).withdrawn.is_empty());
    }
}
