pub mod intake_tree;
