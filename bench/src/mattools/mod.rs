//! MatTools: can a model use materials-science software? Code tasks whose generated Python
//! must run against pymatgen and return the right properties ([`code`]).

pub mod code;
