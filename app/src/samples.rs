//! Structures bundled with the page until the mineral pool is wired in.

/// Rocksalt NaCl, conventional cell, in pymatgen's P1 CIF style.
pub const ROCKSALT_CIF: &str = "# generated using pymatgen
data_NaCl
_symmetry_space_group_name_H-M   'P 1'
_cell_length_a   5.69000000
_cell_length_b   5.69000000
_cell_length_c   5.69000000
_cell_angle_alpha   90.00000000
_cell_angle_beta   90.00000000
_cell_angle_gamma   90.00000000
_symmetry_Int_Tables_number   1
_chemical_formula_structural   NaCl
_chemical_formula_sum   'Na4 Cl4'
_cell_volume   184.22000900
_cell_formula_units_Z   4
loop_
 _symmetry_equiv_pos_site_id
 _symmetry_equiv_pos_as_xyz
  1  'x, y, z'
loop_
 _atom_site_type_symbol
 _atom_site_label
 _atom_site_symmetry_multiplicity
 _atom_site_fract_x
 _atom_site_fract_y
 _atom_site_fract_z
 _atom_site_occupancy
  Na  Na0  1  0.00000000  0.00000000  0.00000000  1
  Na  Na1  1  0.00000000  0.50000000  0.50000000  1
  Na  Na2  1  0.50000000  0.00000000  0.50000000  1
  Na  Na3  1  0.50000000  0.50000000  0.00000000  1
  Cl  Cl4  1  0.50000000  0.00000000  0.00000000  1
  Cl  Cl5  1  0.50000000  0.50000000  0.50000000  1
  Cl  Cl6  1  0.00000000  0.00000000  0.50000000  1
  Cl  Cl7  1  0.00000000  0.50000000  0.00000000  1
";
