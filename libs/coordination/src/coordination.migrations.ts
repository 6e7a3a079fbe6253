import { tablesMigration } from '@stoa/persistence';

/** The square's tables (portable: SQLite and PostgreSQL). */
const CreateSquare1765500000000 = tablesMigration('CreateSquare1765500000000', {
  square_agents: {
    columns: {
      id: 'varchar(36) primary',
      principal: 'varchar(300)',
      name: 'varchar(200) unique',
      role: 'varchar(200) null',
      status: 'varchar(20)',
      capabilities: 'text',
      manifest: 'text',
      current_task: 'text null',
      last_heartbeat_at: 'bigint',
      registered_at: 'bigint',
    },
    indices: { idx_square_agents_principal: ['principal'] },
  },
  square_channels: {
    columns: {
      id: 'varchar(36) primary',
      name: 'varchar(200) unique',
      topic: 'text null',
      message_count: 'integer',
      created_at: 'bigint',
      last_activity_at: 'bigint null',
    },
  },
  square_messages: {
    columns: {
      id: 'varchar(36) primary',
      channel_id: 'varchar(36)',
      seq: 'integer',
      agent_id: 'varchar(36)',
      parent_id: 'varchar(36) null',
      content_type: 'varchar(40)',
      content: 'text',
      created_at: 'bigint',
    },
    indices: { idx_square_messages_channel_at: ['channel_id', 'created_at'] },
  },
  square_board: {
    columns: {
      key: 'varchar(500) primary',
      version: 'integer primary',
      value: 'text',
      schema: 'text null',
      agent_id: 'varchar(36)',
      created_at: 'bigint',
    },
  },
  square_locks: {
    columns: {
      name: 'varchar(300) primary',
      holder_agent_id: 'varchar(36) null',
      fencing_token: 'bigint',
      acquired_at: 'bigint null',
      expires_at: 'bigint null',
    },
  },
  square_signals: {
    columns: {
      id: 'varchar(36) primary',
      to_agent_id: 'varchar(36)',
      from_agent_id: 'varchar(36)',
      kind: 'varchar(100)',
      payload: 'text',
      created_at: 'bigint',
      delivered_at: 'bigint null',
    },
    indices: { idx_square_signals_to: ['to_agent_id', 'delivered_at'] },
  },
});

export const COORDINATION_MIGRATIONS = [CreateSquare1765500000000];
