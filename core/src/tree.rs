//! The tree's per-entry work in columns (issue 42, goal 2): sidecar/store/tree.py's `add_parsed` loop (the entries'
//! list, the id -> entry dict, the parents' strings shared, the orphans, the entries to note) and its path walk.
//!
//! The Python tree keeps its public lists and dict (a hundred callers read `entries` and `by_id`); beside them this
//! keeps, per entry in file order, the index of its parent as resolved when it was added, and each id's index by
//! the id's Python hash. A walk then steps down a column of integers instead of looking every parent up in a dict.
//! Whatever this cannot vouch for (an id met twice, two ids of one hash, a parent that came after its child) it
//! hands back to the Python walk, which reads the dict as it is: a walk here gives the Python walk's path or none.

use std::collections::HashMap;

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyType};

use crate::Quick;

/// The entry's parent id is None or empty: a root, the walk stops there.
const ROOT: u32 = u32::MAX;
/// The parent id named no entry indexed before this one: the walk asks the dict whether it names one now.
const UNRESOLVED: u32 = u32::MAX - 1;

#[pyclass(module = "sidecar_core")]
pub struct TreeIndex {
    // Per entry, in the order of the tree's `entries`: its parent's index (or ROOT, UNRESOLVED) and its id's hash.
    parents: Vec<u32>,
    id_hashes: Vec<isize>,
    // Each indexed id's entry, by the id's hash (exact while `vouched`: no hash is there twice).
    by_hash: HashMap<isize, u32, Quick>,
    // False once an id repeated or two ids shared a hash: from then on every walk is Python's.
    vouched: bool,
}

impl TreeIndex {
    /// Index the entry at `index` (the next one), its parent resolved against what is indexed, as `add` does.
    /// `parent_found`: whether the tree's dict held the parent id when the entry was added.
    fn push(&mut self, index: usize, id_hash: isize, parent: Option<&Bound<'_, PyAny>>, parent_found: bool) -> PyResult<()> {
        let parent_index = match parent {
            None => ROOT,
            Some(parent) if parent.len()? == 0 => ROOT, // an empty parent id ends the walk, as `if parent` does
            Some(_) if !parent_found => UNRESOLVED,
            Some(parent) => match self.by_hash.get(&parent.hash()?) {
                Some(&found) => found,
                // In the dict but not indexed before it: the entry itself (its own parent) or a later one.
                None => UNRESOLVED,
            },
        };
        if index > u32::MAX as usize - 2 {
            self.vouched = false; // more entries than the column can name: the Python walk reads them
        }
        self.parents.push(parent_index);
        self.id_hashes.push(id_hash);
        if self.by_hash.insert(id_hash, index as u32).is_some() {
            self.vouched = false;
        }
        Ok(())
    }

    /// Index the entries of `entries` not indexed yet (those `SessionTree.add` appended one by one).
    fn catch_up(&mut self, entries: &Bound<'_, PyList>, by_id: &Bound<'_, PyDict>) -> PyResult<()> {
        let py = entries.py();
        for index in self.parents.len()..entries.len() {
            let entry = entries.get_item(index)?;
            let id = entry.getattr(intern!(py, "id"))?;
            let parent = entry.getattr(intern!(py, "parent_id"))?;
            let parent = if parent.is_none() { None } else { Some(parent) };
            let found = match &parent {
                Some(parent) => by_id.contains(parent)?,
                None => false,
            };
            self.push(index, id.hash()?, parent.as_ref(), found)?;
        }
        Ok(())
    }
}

#[pymethods]
impl TreeIndex {
    #[new]
    fn new() -> Self {
        TreeIndex { parents: Vec::new(), id_hashes: Vec::new(), by_hash: HashMap::default(), vouched: true }
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
            let parent = item.getattr(parent_name)?;
            let mut parent_found = false;
            let mut parent_is_last = false;
            if !parent.is_none() {
                if let Some(last_id) = &last_id {
                    if parent.is(last_id) || parent.eq(last_id)? {
                        parent_is_last = true;
                        parent_found = true;
                        if !parent.is(last_id) {
                            item.setattr(parent_name, last_id)?; // one string object for both (see add)
                        }
                    }
                }
                if !parent_is_last {
                    match by_id.get_item(&parent)? {
                        Some(found) => {
                            parent_found = true;
                            let found_id = found.getattr(id_name)?;
                            if !found_id.is(&parent) {
                                item.setattr(parent_name, found_id)?;
                            }
                        }
                        None => orphans.append(&item)?,
                    }
                }
            }
            let id_hash = id.hash()?;
            if parent_is_last && self.vouched && index > 0 {
                // The entry before is the parent: no lookup of its hash.
                let parent_index = if parent.len()? == 0 { ROOT } else { (index - 1) as u32 };
                self.parents.push(parent_index);
                self.id_hashes.push(id_hash);
                if self.by_hash.insert(id_hash, index as u32).is_some() {
                    self.vouched = false;
                }
                if index > u32::MAX as usize - 2 {
                    self.vouched = false;
                }
            } else {
                let parent = if parent.is_none() { None } else { Some(&parent) };
                self.push(index, id_hash, parent, parent_found)?;
            }
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
        while self.parents.len() > length {
            let index = self.parents.len() - 1;
            self.parents.pop();
            let id_hash = self.id_hashes.pop().unwrap_or_default();
            if self.by_hash.get(&id_hash) == Some(&(index as u32)) {
                self.by_hash.remove(&id_hash);
            }
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
        if self.parents.len() > entries.len() {
            self.vouched = false; // entries were taken off without truncate: nothing here can be trusted
        }
        self.catch_up(entries, by_id)?;
        if !self.vouched {
            return Ok(None);
        }
        if by_id.get_item(leaf_id)?.is_none() {
            return Ok(Some(PyList::empty(py)));
        }
        let Some(&leaf) = self.by_hash.get(&leaf_id.hash()?) else {
            return Ok(None);
        };
        let mut walked: Vec<u32> = Vec::new();
        let mut at = leaf;
        loop {
            walked.push(at);
            match self.parents[at as usize] {
                ROOT => break,
                UNRESOLVED => {
                    let parent = entries.get_item(at as usize)?.getattr(intern!(py, "parent_id"))?;
                    if by_id.contains(parent)? {
                        return Ok(None); // its parent came later in the file: the Python walk finds it
                    }
                    break;
                }
                parent => at = parent,
            }
        }
        let path = walked.iter().rev().map(|&index| entries.get_item(index as usize)).collect::<PyResult<Vec<_>>>()?;
        Ok(Some(PyList::new(py, path)?))
    }

    /// How many entries are indexed, and whether the walks here are vouched for (the tests' view).
    fn state(&self) -> (usize, bool) {
        (self.parents.len(), self.vouched)
    }
}
