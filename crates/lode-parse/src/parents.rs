//! Parents and previous siblings of nodes asked for in the order of the file.
//! tree-sitter keeps no parent links: `Node::parent` and `Node::prev_sibling`
//! descend from the root, at a cost of the node's depth each, so asking them
//! for every definition of a deep tree costs depth times definitions. Going
//! from the path to the node asked before costs about the distance between
//! the two instead.

use tree_sitter::{Node, TreeCursor};

pub(crate) struct Parents<'t> {
    /// From the root down to the parent of the node asked before.
    path: Vec<Node<'t>>,
    cursor: TreeCursor<'t>,
}

impl<'t> Parents<'t> {
    pub(crate) fn new(root: Node<'t>) -> Self {
        Parents {
            path: vec![root],
            cursor: root.walk(),
        }
    }

    /// The parent of `node`, a node of this tree, as [`Node::parent`] gives it.
    pub(crate) fn of(&mut self, node: Node<'t>) -> Option<Node<'t>> {
        while self.path.len() > 1 && !may_lead_to(self.path[self.path.len() - 1], node) {
            self.path.pop();
        }
        loop {
            let top = *self.path.last().expect("the root stays on the path");
            if top == node {
                return None;
            }
            match top.child_with_descendant(node) {
                // Found among the children: `top` is the parent for certain.
                Some(child) if child == node => return Some(top),
                Some(child) => self.path.push(child),
                // Not below `top` after all (a node of the same range).
                None => {
                    self.path.truncate(1);
                    return node.parent();
                }
            }
        }
    }

    /// The sibling just before `node`, as [`Node::prev_sibling`] gives it.
    pub(crate) fn prev_sibling(&mut self, node: Node<'t>) -> Option<Node<'t>> {
        let parent = self.of(node)?;
        self.cursor.reset(parent);
        // A byte finds any node but an empty one.
        let found = self
            .cursor
            .goto_first_child_for_byte(node.start_byte())
            .is_some()
            && self.cursor.node() == node;
        // tree-sitter's cursor sometimes fails to step back (among comments
        // in a Rust file); a step forward, which it takes reliably, checks it.
        if found && self.cursor.goto_previous_sibling() {
            let prev = self.cursor.node();
            if self.cursor.goto_next_sibling() && self.cursor.node() == node {
                return Some(prev);
            }
        }
        node.prev_sibling()
    }
}

/// Whether `node` may lie below `top`: within its bytes, and not `top` itself.
fn may_lead_to(top: Node, node: Node) -> bool {
    top != node && top.start_byte() <= node.start_byte() && node.end_byte() <= top.end_byte()
}

#[cfg(test)]
mod tests {
    use lode_core::Language;

    use super::*;

    /// Every node of the tree, in the order of the file.
    fn nodes(root: Node) -> Vec<Node> {
        let mut out = Vec::new();
        let mut cursor = root.walk();
        loop {
            out.push(cursor.node());
            if cursor.goto_first_child() {
                continue;
            }
            while !cursor.goto_next_sibling() {
                if !cursor.goto_parent() {
                    return out;
                }
            }
        }
    }

    #[test]
    fn parents_and_siblings_are_tree_sitters() {
        let cases = [
            (
                Language::Python,
                "import os\n\n# a\n@dec\ndef f(a, b):\n    \"\"\"Doc.\"\"\"\n    return [g(x) for x in a]\n\nclass C:\n    def m(self): pass\n",
            ),
            (
                Language::JavaScript,
                "/** c */\nexport function f() { if (a) { b(); } else { c(); } }\nconst o = {a: 1, b: () => {}};\n",
            ),
            (
                Language::Rust,
                "/// d\n#[attr]\npub fn f() -> u8 { let x = { 1 }; x }\nimpl A { fn g(&self) {} }\n",
            ),
            // An error and a missing node.
            (Language::JavaScript, "function f( { return (1 + ; }\n"),
        ];
        for (lang, src) in cases {
            let mut parser = tree_sitter::Parser::new();
            parser.set_language(&crate::grammar(lang).unwrap()).unwrap();
            let tree = parser.parse(src, None).unwrap();
            let mut parents = Parents::new(tree.root_node());
            for node in nodes(tree.root_node()) {
                assert_eq!(parents.of(node), node.parent(), "{lang} {node:?}");
                assert_eq!(
                    parents.prev_sibling(node),
                    node.prev_sibling(),
                    "{lang} {node:?}"
                );
            }
        }
    }
}
