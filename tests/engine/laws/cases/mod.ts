/** Every law-case family; importing this module registers all cases. */
import "./annotations.ts";
import "./array_map.ts";
import "./cel.ts";
import "./enum_remap.ts";
import "./fields_map.ts";
import "./for_each.ts";
import "./json_patch.ts";
import "./list_join.ts";
import "./map_key_rename.ts";
import "./numeric_scale.ts";
import "./presence.ts";
import "./regex_fields.ts";
import "./rename.ts";
import "./scalar_object.ts";
import "./singleton.ts";
import "./type_coerce.ts";
import "./units.ts";
