/** A domain state (reference §4.1 State): token, description, affordance phrases. */
export interface StateSpec {
  token: string;
  description: string;
  affordances: string[];
}

export interface ParameterSpec {
  name: string;
  /** Type as a string (`str`, `int`, `networkx.Graph`…); never imported by the server. */
  type: string;
  description: string;
  required: boolean;
  default?: unknown;
}

export interface ReturnSpec {
  name: string;
  type: string;
  description: string;
}

/** A domain tool (reference ToolDefinition), module resolved. */
export interface ToolDef {
  id: number;
  name: string;
  description: string;
  parameters: ParameterSpec[];
  returns: ReturnSpec[];
  module: string;
  requires: string[];
  produces: string[];
  affordances: string[];
}

/** A markdown skill with YAML front matter (reference §4.5). */
export interface SkillDef {
  name: string;
  description: string;
  domain: string;
  states: string[];
  content: string;
  path: string;
}

/** Everything an executor offers besides code: tools, states and skills. */
export interface DomainCatalog {
  serverName: string;
  tools: ToolDef[];
  states: StateSpec[];
  skills: SkillDef[];
}
