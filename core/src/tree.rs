//! The tree's per-entry work in columns (issue 42, goal 2): sidecar/store/tree.py's `add_parsed` loop (the entries'
//! list, the id -> entry dict, the parents' strings shared, the orphans, the entries to note) and its path walk.
//!
//! The Python tree keeps its public lists and dict (a hundred callers read `entries` and `by_id`); beside them this
//! keeps, per entry in file order, the index of its parent (the entry the dict held under the parent id when the
//! entry was added). A walk then steps down a column of integers instead of looking every parent up in a dict.
//! Whatever this cannot vouch for (an id met twice, a parent after its child or the entry itself) it hands back to
//! the Python walk, which reads the dict as it is: a walk here gives the Python walk's path or none.

use std::collections::HashMap;

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyType};

use crate::Quick;

/// The entry's parent id is None or empty: a root, the walk stops there.
const ROOT: u32 = u32::MAX;
/// The parent id named no entry before this one: the walk asks the dict whether it names one now.
const UNRESOLVED: u32 = u32::MAX - 1;
/// The parent is an entry further back than the one before: its index is found when a walk first needs it.
const PENDING: u32 = u32::MAX - 2;

#[pyclass(module = "sidecar_core")]
pub struct TreeIndex {
    // Per entry, in the order of the tree's `entries`: its parent's index (or ROOT, UNRESOLVED, PENDING) and the
    // entry object's address (the list holds the object, so the address names it while it is there).
    parents: Vec<u32>,
    addresses: Vec<usize>,
    // The PENDING entries' indices and their parents' addresses. Looking each parent up as it came would take a map
    // of every id, as large as the tree's own dict and as slow to fill; a walk resolves them all in one pass.
    pending: Vec<(u32, usize)>,
}

impl TreeIndex {
    /// Index the entry at `index` (the next one): `parent` is the entry `by_id` held under its parent id then.
    fn push(
        &mut self,
        index: usize,
        entry: &Bound<'_, PyAny>,
        parent_id: &Bound<'_, PyAny>,
        parent: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let parent_index = if parent_id.is_none() || parent_id.len()? == 0 {
            ROOT // an empty parent id ends the walk, as `if parent` does
        } else {
            match parent {
                None => UNRESOLVED,
                Some(parent) => {
                    let address = parent.as_ptr() as usize;
                    if index > 0 && self.addresses[index - 1] == address {
                        (index - 1) as u32
                    } else {
                        self.pending.push((index as u32, address));
                        PENDING
                    }
                }
            }
        };
        self.parents.push(parent_index);
        self.addresses.push(entry.as_ptr() as usize);
        Ok(())
    }

    /// Index the entries of `entries` not indexed yet (those `SessionTree.add` appended one by one).
    fn catch_up(&mut self, entries: &Bound<'_, PyList>, by_id: &Bound<'_, PyDict>) -> PyResult<()> {
        let py = entries.py();
        for index in self.parents.len()..entries.len() {
            let entry = entries.get_item(index)?;
            let parent_id = entry.getattr(intern!(py, "parent_id"))?;
            let parent = if parent_id.is_none() {
                None
            } else {
                by_id.get_item(&parent_id)?
            };
            self.push(index, &entry, &parent_id, parent.as_ref())?;
        }
        Ok(())
    }

    /// Give each PENDING entry its parent's index, in one pass back over the addresses.
    fn resolve_pending(&mut self) {
        if self.pending.is_empty() {
            return;
        }
        let mut wanted: HashMap<usize, u32, Quick> =
            self.pending.iter().map(|&(_, address)| (address, UNRESOLVED)).collect();
        let mut left = wanted.len();
        for (index, address) in self.addresses.iter().enumerate().rev() {
            if let Some(found) = wanted.get_mut(address) {
                if *found == UNRESOLVED {
                    *found = index as u32;
                    left -= 1;
                    if left == 0 {
                        break;
                    }
                }
            }
        }
        for &(child, address) in &self.pending {
            let parent = wanted[&address];
            // Only a parent before its child is walked here: the entry itself, or one after it, is Python's to walk.
            self.parents[child as usize] = if parent < child { parent } else { UNRESOLVED };
        }
        self.pending.clear();
    }
}

#[pymethods]
impl TreeIndex {
    #[new]
    fn new() -> Self {
        TreeIndex {
            parents: Vec::new(),
            addresses: Vec::new(),
            pending: Vec::new(),
        }
    }

    /// `SessionTree.add_parsed`'s loop: each `entry_type` of `items` with an id goes on `entries` and into
    /// `by_id`, its parent id made the parent's own string, onto `orphans` when its parent is not there;
    /// `note(entry)` is called for each whose type is in `noted` (the first time it answers True, a conversation
    /// was met: from then on only in `noted_later`). Gives the last entry added, or None.
    #[allow(clippy::too_many_arguments)]
    fn add_parsed<'py>(
        &mut self,
        py: Python<'py>,
        items: &Bound<'py, PyList>,
        entry_type: &Bound<'py, PyType>,
        entries: &Bound<'py, PyList>,
        by_id: &Bound<'py, PyDict>,
        orphans: &Bound<'py, PyList>,
        noted: &Bound<'py, PyAny>,
        noted_later: &Bound<'py, PyAny>,
        note: &Bound<'py, PyAny>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.catch_up(entries, by_id)?;
        let (id_name, parent_name, type_name) = (intern!(py, "id"), intern!(py, "parent_id"), intern!(py, "type"));
        if self.parents.is_empty() {
            // A file's first parse: at most one entry per item, the columns sized once hold no slack from doubling
            // (up to 4.8 MB at 400,000 entries). Later, appends' few items grow them as a Vec grows, by doubling.
            self.parents.reserve_exact(items.len());
            self.addresses.reserve_exact(items.len());
        }
        let mut noted = noted.clone();
        let mut last: Option<Bound<'py, PyAny>> = None;
        let mut last_id: Option<Bound<'py, PyAny>> = None;
        for item in items.iter() {
            if !item.is_instance(entry_type)? {
                continue;
            }
            let id = item.getattr(id_name)?;
            if id.is_none() {
                continue;
            }
            let index = entries.len();
            entries.append(&item)?;
            by_id.set_item(&id, &item)?;
            let parent_id = item.getattr(parent_name)?;
            let mut parent = None;
            if !parent_id.is_none() {
                if let (Some(last_id), Some(last)) = (&last_id, &last) {
                    if parent_id.is(last_id) || parent_id.eq(last_id)? {
                        // The dict holds the last entry under its id (it was just added): no lookup in a large dict.
                        if !parent_id.is(last_id) {
                            item.setattr(parent_name, last_id)?; // one string object for both (see add)
                        }
                        parent = Some(last.clone());
                    }
                }
                if parent.is_none() {
                    parent = by_id.get_item(&parent_id)?;
                    match &parent {
                        Some(found) => {
                            let found_id = found.getattr(id_name)?;
                            if !found_id.is(&parent_id) {
                                item.setattr(parent_name, found_id)?;
                            }
                        }
                        None => orphans.append(&item)?,
                    }
                }
            }
            self.push(index, &item, &parent_id, parent.as_ref())?;
            if noted.contains(item.getattr(type_name)?)? && note.call1((&item,))?.is_truthy()? {
                noted = noted_later.clone();
            }
            last_id = Some(id);
            last = Some(item);
        }
        Ok(last)
    }

    /// Forget the entries from `length` on (`SessionTree.remove_last` took them off `entries`).
    fn truncate(&mut self, length: usize) {
        if length < self.parents.len() {
            self.parents.truncate(length);
            self.addresses.truncate(length);
            self.pending.retain(|&(child, _)| (child as usize) < length);
        }
    }

    /// The entries from the root to the entry `by_id` holds under `leaf_id`, or None when the Python walk must
    /// give them (an id repeated, a parent after its child): the same path either way.
    fn path<'py>(
        &mut self,
        py: Python<'py>,
        leaf_id: &Bound<'py, PyAny>,
        entries: &Bound<'py, PyList>,
        by_id: &Bound<'py, PyDict>,
    ) -> PyResult<Option<Bound<'py, PyList>>> {
        if self.parents.len() > entries.len() || entries.len() != by_id.len() {
            // Entries taken off without truncate (nothing here can be trusted), or an id repeated (each parent
            // was resolved to the entry of its id then, the Python walk takes the one the dict holds now).
            return Ok(None);
        }
        self.catch_up(entries, by_id)?;
        let Some(leaf) = by_id.get_item(leaf_id)? else {
            return Ok(Some(PyList::empty(py)));
        };
        // Most often the leaf is the last entry: the addresses are looked through from the end.
        let address = leaf.as_ptr() as usize;
        let Some(leaf) = self.addresses.iter().rposition(|&at| at == address) else {
            return Ok(None);
        };
        self.resolve_pending();
        let mut walked: Vec<u32> = Vec::new();
        let mut at = leaf as u32;
        loop {
            walked.push(at);
            match self.parents[at as usize] {
                ROOT => break,
                UNRESOLVED => {
                    let parent = entries.get_item(at as usize)?.getattr(intern!(py, "parent_id"))?;
                    if by_id.contains(parent)? {
                        return Ok(None); // its parent came later in the file (or is itself): the Python walk's
                    }
                    break;
                }
                parent => at = parent,
            }
        }
        let path = walked
            .iter()
            .rev()
            .map(|&index| entries.get_item(index as usize))
            .collect::<PyResult<Vec<_>>>()?;
        Ok(Some(PyList::new(py, path)?))
    }

    /// How many entries are indexed, and how many parents wait for a walk to find them (the tests' view).
    fn state(&self) -> (usize, usize) {
        (self.parents.len(), self.pending.len())
    }
}
